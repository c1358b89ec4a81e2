//! The syntax of `HSA_TOOLS_LIB`, shared by the runtime that loads tools and the tools that look
//! for their place in the list: library names separated by white space; double quotes group a
//! name that contains spaces; a backslash takes the next character literally.

use std::fmt;

/// Why `HSA_TOOLS_LIB` could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolsLibError {
    /// A double quote is never closed.
    UnterminatedQuote,
    /// The value ends with a backslash that escapes nothing.
    TrailingBackslash,
}

/// Splits an `HSA_TOOLS_LIB` value into library names, as the runtime does.
pub fn parse(value: &str) -> Result<Vec<String>, ToolsLibError> {
    let mut names = Vec::new();
    let mut current = String::new();
    let mut in_word = false;
    let mut quoted = false;
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let next = chars.next().ok_or(ToolsLibError::TrailingBackslash)?;
                current.push(next);
                in_word = true;
            }
            '"' => {
                quoted = !quoted;
                in_word = true;
            }
            c if c.is_whitespace() && !quoted => {
                if in_word {
                    names.push(std::mem::take(&mut current));
                    in_word = false;
                }
            }
            c => {
                current.push(c);
                in_word = true;
            }
        }
    }
    if quoted {
        return Err(ToolsLibError::UnterminatedQuote);
    }
    if in_word {
        names.push(current);
    }
    Ok(names.into_iter().filter(|n| !n.is_empty()).collect())
}

/// Quotes one library name for an `HSA_TOOLS_LIB` value, so that [`parse`] gives it back.
pub fn quote(path: &str) -> String {
    if path.is_empty() || path.contains([' ', '\t', '"', '\\']) {
        let escaped = path.replace('\\', "\\\\").replace('"', "\\\"");
        format!("\"{escaped}\"")
    } else {
        path.to_owned()
    }
}

impl fmt::Display for ToolsLibError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ToolsLibError::UnterminatedQuote => {
                "HSA_TOOLS_LIB has an unterminated double quote; close it or escape it with a backslash"
            }
            ToolsLibError::TrailingBackslash => "HSA_TOOLS_LIB ends with a lone backslash; remove it or escape it as \\\\",
        })
    }
}

impl std::error::Error for ToolsLibError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_on_spaces() {
        assert_eq!(
            parse("a.so  b.so\tc.so ").unwrap(),
            ["a.so", "b.so", "c.so"]
        );
        assert!(parse("   ").unwrap().is_empty());
    }

    #[test]
    fn quotes_group_spaces() {
        assert_eq!(
            parse("\"my dir/t.so\" x.so").unwrap(),
            ["my dir/t.so", "x.so"]
        );
        assert_eq!(parse("pre\"fix mid\"post").unwrap(), ["prefix midpost"]);
    }

    #[test]
    fn backslash_escapes() {
        assert_eq!(
            parse(r"my\ dir/t.so b.so").unwrap(),
            ["my dir/t.so", "b.so"]
        );
        assert_eq!(parse(r#"a\"b.so"#).unwrap(), [r#"a"b.so"#]);
        assert_eq!(parse(r"a\\b.so").unwrap(), [r"a\b.so"]);
    }

    #[test]
    fn tool_paths_with_spaces_are_quoted_and_round_trip() {
        assert_eq!(quote("/opt/k/libkreplay.so"), "/opt/k/libkreplay.so");
        assert_eq!(quote("/my dir/lib.so"), "\"/my dir/lib.so\"");
        assert_eq!(quote("/a\"b\\c"), "\"/a\\\"b\\\\c\"");
        for p in ["/my dir/lib.so", "/a\"b\\c d", "plain.so"] {
            assert_eq!(parse(&quote(p)).unwrap(), vec![p.to_owned()]);
        }
    }

    #[test]
    fn quoting_round_trips() {
        for name in ["plain.so", "/my dir/t.so", r#"a"b\c.so"#, ""] {
            let value = format!("x.so {} y.so", quote(name));
            let expected: Vec<&str> = if name.is_empty() {
                vec!["x.so", "y.so"]
            } else {
                vec!["x.so", name, "y.so"]
            };
            assert_eq!(parse(&value).unwrap(), expected, "{value}");
        }
    }

    #[test]
    fn malformed_values_are_errors() {
        assert_eq!(parse("\"a.so"), Err(ToolsLibError::UnterminatedQuote));
        assert_eq!(parse("a.so\\"), Err(ToolsLibError::TrailingBackslash));
    }
}
