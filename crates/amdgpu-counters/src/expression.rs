//! The expression language of derived metrics: numbers, counter names, `+ - * /`,
//! parentheses and `reduce(X, sum|max|min|avr)` over a counter's instances. The agent
//! constants (`CU_NUM`, `SE_NUM`, `SIMD_NUM`, `MAX_WAVE_SIZE`) are names like counters; the
//! caller's lookup answers them.

use thiserror::Error;

/// How the instances of a counter are reduced to one value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reduction {
    /// Sum over instances (also a bare name's meaning).
    Sum,
    /// Largest instance.
    Max,
    /// Smallest instance.
    Min,
    /// Mean of the instances.
    Avr,
}

/// The names an expression may use that are agent constants, not counters.
pub const CONSTANTS: [&str; 4] = ["CU_NUM", "SE_NUM", "SIMD_NUM", "MAX_WAVE_SIZE"];

/// A parsed expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// A number.
    Number(f64),
    /// A counter or constant, reduced.
    Name(String, Reduction),
    /// `a op b`.
    Binary(Box<Expr>, Op, Box<Expr>),
    /// `-a`.
    Negate(Box<Expr>),
}

/// A binary operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
}

/// Why an expression does not parse.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum ExprError {
    /// A character or token out of place.
    #[error("unexpected {found} at offset {at} in the expression `{text}`")]
    Unexpected {
        /// What was found.
        found: String,
        /// Byte offset.
        at: usize,
        /// The whole expression.
        text: String,
    },
    /// A function the language does not have (or kreplay does not evaluate).
    #[error(
        "`{name}(...)` is not supported in the expression `{text}`: only reduce(X, sum|max|min|avr)"
    )]
    Function {
        /// The function.
        name: String,
        /// The whole expression.
        text: String,
    },
}

impl Expr {
    /// Parses an expression.
    pub fn parse(text: &str) -> Result<Expr, ExprError> {
        let mut p = Parser { text, pos: 0 };
        let e = p.sum()?;
        p.skip_space();
        match p.peek() {
            None => Ok(e),
            Some(_) => Err(p.unexpected()),
        }
    }

    /// The counter names the expression reads (constants excluded), each once, in order.
    pub fn names(&self) -> Vec<&str> {
        let mut out = Vec::new();
        self.collect_names(&mut out);
        out
    }

    fn collect_names<'a>(&'a self, out: &mut Vec<&'a str>) {
        match self {
            Expr::Number(_) => {}
            Expr::Name(n, _) => {
                if !CONSTANTS.contains(&n.as_str()) && !out.contains(&n.as_str()) {
                    out.push(n);
                }
            }
            Expr::Binary(a, _, b) => {
                a.collect_names(out);
                b.collect_names(out);
            }
            Expr::Negate(a) => a.collect_names(out),
        }
    }

    /// The value, reading each name through `lookup`; `None` when a name has no value.
    pub fn evaluate(&self, lookup: &dyn Fn(&str, Reduction) -> Option<f64>) -> Option<f64> {
        Some(match self {
            Expr::Number(v) => *v,
            Expr::Name(n, r) => lookup(n, *r)?,
            Expr::Negate(a) => -a.evaluate(lookup)?,
            Expr::Binary(a, op, b) => {
                let (a, b) = (a.evaluate(lookup)?, b.evaluate(lookup)?);
                match op {
                    Op::Add => a + b,
                    Op::Sub => a - b,
                    Op::Mul => a * b,
                    Op::Div => a / b,
                }
            }
        })
    }
}

struct Parser<'a> {
    text: &'a str,
    pos: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<char> {
        self.text[self.pos..].chars().next()
    }

    fn skip_space(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.pos += 1;
        }
    }

    fn unexpected(&self) -> ExprError {
        let found = match self.peek() {
            Some(c) => format!("`{c}`"),
            None => "the end".to_string(),
        };
        ExprError::Unexpected {
            found,
            at: self.pos,
            text: self.text.to_string(),
        }
    }

    fn eat(&mut self, c: char) -> bool {
        self.skip_space();
        if self.peek() == Some(c) {
            self.pos += c.len_utf8();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: char) -> Result<(), ExprError> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(self.unexpected())
        }
    }

    fn sum(&mut self) -> Result<Expr, ExprError> {
        let mut left = self.product()?;
        loop {
            let op = if self.eat('+') {
                Op::Add
            } else if self.eat('-') {
                Op::Sub
            } else {
                return Ok(left);
            };
            left = Expr::Binary(Box::new(left), op, Box::new(self.product()?));
        }
    }

    fn product(&mut self) -> Result<Expr, ExprError> {
        let mut left = self.unary()?;
        loop {
            let op = if self.eat('*') {
                Op::Mul
            } else if self.eat('/') {
                Op::Div
            } else {
                return Ok(left);
            };
            left = Expr::Binary(Box::new(left), op, Box::new(self.unary()?));
        }
    }

    fn unary(&mut self) -> Result<Expr, ExprError> {
        if self.eat('-') {
            return Ok(Expr::Negate(Box::new(self.unary()?)));
        }
        if self.eat('(') {
            let e = self.sum()?;
            self.expect(')')?;
            return Ok(e);
        }
        self.skip_space();
        match self.peek() {
            Some(c) if c.is_ascii_digit() || c == '.' => self.number(),
            Some(c) if c.is_ascii_alphabetic() || c == '_' => self.name_or_call(),
            _ => Err(self.unexpected()),
        }
    }

    fn number(&mut self) -> Result<Expr, ExprError> {
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_digit() || c == '.' || c == 'e' || c == 'E')
        {
            self.pos += 1;
        }
        self.text[start..self.pos]
            .parse()
            .map(Expr::Number)
            .map_err(|_| {
                self.pos = start;
                self.unexpected()
            })
    }

    fn identifier(&mut self) -> &str {
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            self.pos += 1;
        }
        &self.text[start..self.pos]
    }

    fn name_or_call(&mut self) -> Result<Expr, ExprError> {
        let name = self.identifier().to_string();
        if !self.eat('(') {
            return Ok(Expr::Name(name, Reduction::Sum));
        }
        if name != "reduce" {
            return Err(ExprError::Function {
                name,
                text: self.text.to_string(),
            });
        }
        self.skip_space();
        let counter = self.identifier().to_string();
        if counter.is_empty() {
            return Err(self.unexpected());
        }
        self.expect(',')?;
        self.skip_space();
        let at = self.pos;
        let reduction = match self.identifier() {
            "sum" => Reduction::Sum,
            "max" => Reduction::Max,
            "min" => Reduction::Min,
            "avr" => Reduction::Avr,
            _ => {
                self.pos = at;
                return Err(self.unexpected());
            }
        };
        self.expect(')')?;
        Ok(Expr::Name(counter, reduction))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(text: &str, values: &[(&str, f64)]) -> Option<f64> {
        let lookup = |n: &str, r: Reduction| {
            let v = values.iter().find(|(k, _)| *k == n)?.1;
            Some(if r == Reduction::Max { v / 2.0 } else { v })
        };
        Expr::parse(text).unwrap().evaluate(&lookup)
    }

    #[test]
    fn precedence_parentheses_and_reduce() {
        assert_eq!(eval("1+2*3", &[]), Some(7.0));
        assert_eq!(eval("(1+2)*3", &[]), Some(9.0));
        assert_eq!(eval("-2*-3", &[]), Some(6.0));
        assert_eq!(
            eval(
                "100*reduce(A,sum)/reduce(B,max)",
                &[("A", 3.0), ("B", 12.0)]
            ),
            Some(50.0)
        );
        assert_eq!(
            eval("A/B", &[("A", 1.0)]),
            None,
            "a missing input gives no value"
        );
    }

    #[test]
    fn names_exclude_constants_and_repeat_once() {
        let e = Expr::parse("reduce(SQ_WAVES,sum)/CU_NUM+SQ_WAVES").unwrap();
        assert_eq!(e.names(), vec!["SQ_WAVES"]);
    }

    #[test]
    fn errors_name_the_place_and_the_function() {
        assert!(matches!(
            Expr::parse("1+"),
            Err(ExprError::Unexpected { at: 2, .. })
        ));
        assert!(matches!(
            Expr::parse("accumulate(SQ_LEVEL_WAVES,HIGH_RES)"),
            Err(ExprError::Function { .. })
        ));
        assert!(matches!(
            Expr::parse("reduce(A,median)"),
            Err(ExprError::Unexpected { .. })
        ));
        assert!(Expr::parse("(1").is_err());
    }
}
