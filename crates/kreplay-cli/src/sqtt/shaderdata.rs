//! Shaderdata records as a thread-trace decoder reports them: JSON array, JSON lines or CSV.

use serde::Deserialize;

/// One shaderdata record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record {
    /// Trace timestamp.
    pub time: i64,
    /// The marker or payload word (only the low 32 bits are meaningful).
    pub value: u64,
    /// Shader engine (0 when the input does not say).
    pub se: u32,
    /// Compute unit.
    pub cu: u32,
    /// SIMD.
    pub simd: u32,
    /// Wave slot.
    pub wave_id: u32,
    /// Flags: bit 0 immediate form, bit 1 privileged.
    pub flags: u32,
}

impl Record {
    /// Records written by the trap handler, not by the program.
    pub fn is_privileged(&self) -> bool {
        self.flags & 2 != 0
    }
}

/// Input form of a record file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum RecordFormat {
    /// Detect from the first non-blank character: `[` JSON array, `{` JSON lines, else CSV.
    Auto,
    /// A JSON array of record objects.
    Json,
    /// One JSON record object per line.
    Jsonl,
    /// CSV with a `time,value,cu,simd,wave_id` header.
    Csv,
}

/// A record file that could not be read: `line` is 1-based (0 when unknown).
#[derive(Debug, thiserror::Error)]
#[error("line {line}: {detail}")]
pub struct RecordError {
    /// 1-based line.
    pub line: usize,
    /// What is wrong and what was expected.
    pub detail: String,
}

#[derive(Deserialize)]
struct JsonRecord {
    time: i64,
    value: JsonValue,
    cu: u32,
    simd: u32,
    wave_id: u32,
    #[serde(default)]
    se: u32,
    #[serde(default)]
    flags: u32,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum JsonValue {
    Number(u64),
    Text(String),
}

impl JsonRecord {
    fn into_record(self, line: usize) -> Result<Record, RecordError> {
        let value = match self.value {
            JsonValue::Number(n) => n,
            JsonValue::Text(t) => {
                parse_unsigned(&t).map_err(|detail| RecordError { line, detail })?
            }
        };
        Ok(Record {
            time: self.time,
            value,
            se: self.se,
            cu: self.cu,
            simd: self.simd,
            wave_id: self.wave_id,
            flags: self.flags,
        })
    }
}

fn parse_unsigned(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let parsed = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => t.parse::<u64>(),
    };
    parsed.map_err(|_| format!("`{t}` is not an unsigned integer (decimal or 0x hex)"))
}

const EXPECTED: &str = "expected records with fields time, value, cu, simd, wave_id";

/// Parses a record file.
pub fn parse(text: &str, format: RecordFormat) -> Result<Vec<Record>, RecordError> {
    parse_numbered(text, format).map(|v| v.into_iter().map(|n| n.record).collect())
}

/// One record with the 1-based line of the file where it starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NumberedRecord {
    /// 1-based line of the record in its file.
    pub line: usize,
    /// The record.
    pub record: Record,
}

/// The 1-based line of byte `offset` of `text`.
fn line_of(text: &str, offset: usize) -> usize {
    1 + memchr::memchr_iter(b'\n', &text.as_bytes()[..offset.min(text.len())]).count()
}

/// Parses a record file, keeping the line where each record starts (for messages that
/// point at one record).
pub fn parse_numbered(
    text: &str,
    format: RecordFormat,
) -> Result<Vec<NumberedRecord>, RecordError> {
    let format = match format {
        RecordFormat::Auto => match text.trim_start().chars().next() {
            Some('[') => RecordFormat::Json,
            Some('{') => RecordFormat::Jsonl,
            Some(_) => RecordFormat::Csv,
            None => return Ok(Vec::new()),
        },
        f => f,
    };
    match format {
        RecordFormat::Json => parse_json_array(text),
        RecordFormat::Jsonl => parse_json_lines(text),
        RecordFormat::Csv | RecordFormat::Auto => parse_csv(text),
    }
}

/// Parses a JSON array of record objects, each numbered by the line where its element starts.
fn parse_json_array(text: &str) -> Result<Vec<NumberedRecord>, RecordError> {
    let raw: Vec<&serde_json::value::RawValue> =
        serde_json::from_str(text).map_err(|e| RecordError {
            line: e.line(),
            detail: format!("{e}; {EXPECTED}"),
        })?;
    raw.into_iter()
        .map(|element| {
            // The element borrows from `text`: its offset there gives its line.
            let offset = (element.get().as_ptr() as usize).saturating_sub(text.as_ptr() as usize);
            let line = line_of(text, offset);
            let parsed: JsonRecord =
                serde_json::from_str(element.get()).map_err(|e| RecordError {
                    line: line + e.line() - 1,
                    detail: format!("{e}; {EXPECTED}"),
                })?;
            Ok(NumberedRecord {
                line,
                record: parsed.into_record(line)?,
            })
        })
        .collect()
}

/// Parses one JSON record object per non-blank line.
fn parse_json_lines(text: &str) -> Result<Vec<NumberedRecord>, RecordError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let raw: JsonRecord = serde_json::from_str(line).map_err(|e| RecordError {
            line: i + 1,
            detail: format!("{e}; {EXPECTED}"),
        })?;
        out.push(NumberedRecord {
            line: i + 1,
            record: raw.into_record(i + 1)?,
        });
    }
    Ok(out)
}

fn parse_csv(text: &str) -> Result<Vec<NumberedRecord>, RecordError> {
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let Some((header_line, header)) = lines.next() else {
        return Ok(Vec::new());
    };
    let columns: Vec<&str> = header.split(',').map(str::trim).collect();
    let find = |name: &str| columns.iter().position(|c| *c == name);
    let required = ["time", "value", "cu", "simd", "wave_id"];
    let mut index = [0usize; 5];
    for (slot, name) in index.iter_mut().zip(required) {
        *slot = find(name).ok_or_else(|| RecordError {
            line: header_line + 1,
            detail: format!("CSV header `{header}` has no `{name}` column; expected a header naming time,value,cu,simd,wave_id"),
        })?;
    }
    let se = find("se");
    let flags = find("flags");
    let mut out = Vec::new();
    for (i, line) in lines {
        let line_no = i + 1;
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        if fields.len() != columns.len() {
            return Err(RecordError {
                line: line_no,
                detail: format!("{} fields, the header has {}", fields.len(), columns.len()),
            });
        }
        let num = |col: usize, name: &str| -> Result<u64, RecordError> {
            parse_unsigned(fields[col]).map_err(|d| RecordError {
                line: line_no,
                detail: format!("{name}: {d}"),
            })
        };
        let small = |col: usize, name: &str| -> Result<u32, RecordError> {
            let v = num(col, name)?;
            u32::try_from(v).map_err(|_| RecordError {
                line: line_no,
                detail: format!("{name}: {v} is too large"),
            })
        };
        let time = fields[index[0]].parse::<i64>().map_err(|_| RecordError {
            line: line_no,
            detail: format!("time: `{}` is not an integer", fields[index[0]]),
        })?;
        let record = Record {
            time,
            value: num(index[1], "value")?,
            cu: small(index[2], "cu")?,
            simd: small(index[3], "simd")?,
            wave_id: small(index[4], "wave_id")?,
            se: se.map(|c| small(c, "se")).transpose()?.unwrap_or(0),
            flags: flags.map(|c| small(c, "flags")).transpose()?.unwrap_or(0),
        };
        out.push(NumberedRecord {
            line: line_no,
            record,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_forms_agree() {
        let json = r#"[{"time": 5, "value": 6, "cu": 1, "simd": 2, "wave_id": 3, "extra": true},
                       {"time": 6, "value": "0xffffffff", "cu": 1, "simd": 2, "wave_id": 3, "flags": 2}]"#;
        let jsonl = "{\"time\": 5, \"value\": 6, \"cu\": 1, \"simd\": 2, \"wave_id\": 3}\n\
                     {\"time\": 6, \"value\": 4294967295, \"cu\": 1, \"simd\": 2, \"wave_id\": 3, \"flags\": 2}\n";
        let csv = "wave_id,time,value,cu,simd,flags\n3,5,6,1,2,0\n3,6,0xffffffff,1,2,2\n";
        let a = parse(json, RecordFormat::Auto).unwrap();
        assert_eq!(a, parse(jsonl, RecordFormat::Auto).unwrap());
        assert_eq!(a, parse(csv, RecordFormat::Auto).unwrap());
        assert_eq!(a[1].value, 0xffff_ffff);
        assert!(a[1].is_privileged());
    }

    #[test]
    fn errors_name_the_line() {
        let err = parse(
            "time,value,cu,simd,wave_id\n1,2,3,4,5\n1,x,3,4,5\n",
            RecordFormat::Csv,
        )
        .unwrap_err();
        assert_eq!(err.line, 3);
        assert!(err.detail.contains("value"), "{err}");
        let err = parse("time,value,cu\n", RecordFormat::Csv).unwrap_err();
        assert!(err.detail.contains("simd"), "{err}");
        let err = parse("{\"time\":1}\n", RecordFormat::Jsonl).unwrap_err();
        assert_eq!(err.line, 1);
        let err = parse("[\n{\"time\": 1, \"value\": 2, \"cu\": 0, \"simd\": 0, \"wave_id\": 0},\n{\"time\": 1}\n]", RecordFormat::Json)
            .unwrap_err();
        assert_eq!(err.line, 3, "{err}");
    }

    #[test]
    fn numbered_records_carry_their_line_in_every_form() {
        let one = "{\"time\": 1, \"value\": 2, \"cu\": 0, \"simd\": 0, \"wave_id\": 0}";
        let lines = |text: &str| -> Vec<usize> {
            parse_numbered(text, RecordFormat::Auto)
                .unwrap()
                .iter()
                .map(|n| n.line)
                .collect()
        };
        assert_eq!(
            lines(&format!("[\n  {one},\n\n  {one}, {one}\n]")),
            [2, 4, 4]
        );
        assert_eq!(lines(&format!("{one}\n\n{one}\n")), [1, 3]);
        assert_eq!(
            lines("time,value,cu,simd,wave_id\n\n1,2,0,0,0\n1,2,0,0,0\n"),
            [3, 4]
        );
    }
}
