//! The two hint languages, parsed into one [`Expr`]: `jsonPredicateHints` (the protocol's JSON
//! tree) and `predicateHints` (its restricted SQL: `col op literal`, `literal op col`,
//! `col IS [NOT] NULL`, with `=`, `<>`, `<`, `<=`, `>`, `>=`). What does not parse is
//! [`Expr::Unknown`], never an error: hints are best effort.

use serde_json::Value;

use super::{Expr, Op, Operand, ValueType};

/// A `jsonPredicateHints` string.
pub fn from_json(text: &str) -> Expr {
    match serde_json::from_str::<Value>(text) {
        Ok(v) => node(&v),
        Err(_) => Expr::Unknown,
    }
}

fn value_type(v: &Value) -> Option<Option<ValueType>> {
    match v.get("valueType") {
        None | Some(Value::Null) => Some(None),
        Some(Value::String(s)) => match s.as_str() {
            "bool" | "boolean" => Some(Some(ValueType::Bool)),
            "int" | "long" => Some(Some(ValueType::Int)),
            "float" | "double" => Some(Some(ValueType::Float)),
            "string" => Some(Some(ValueType::String)),
            "date" => Some(Some(ValueType::Date)),
            // A type this server does not know: the comparison is not judged.
            _ => None,
        },
        Some(_) => None,
    }
}

fn operand(v: &Value) -> Option<Operand> {
    let ty = value_type(v)?;
    match v.get("op")?.as_str()? {
        "column" => Some(Operand::Column {
            name: v.get("name")?.as_str()?.to_owned(),
            ty,
        }),
        "literal" => {
            let text = match v.get("value")? {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                Value::Bool(b) => b.to_string(),
                _ => return None,
            };
            // A JSON literal is typed by its declaration; without one it is not judged.
            Some(Operand::Literal {
                text,
                ty: Some(ty?),
                quoted: false,
            })
        }
        _ => None,
    }
}

fn node(v: &Value) -> Expr {
    let Some(op) = v.get("op").and_then(Value::as_str) else {
        return Expr::Unknown;
    };
    let children: &[Value] = v
        .get("children")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice);
    let cmp = |op: Op| match children {
        [a, b] => match (operand(a), operand(b)) {
            (Some(a), Some(b)) => Expr::Cmp(op, a, b),
            _ => Expr::Unknown,
        },
        _ => Expr::Unknown,
    };
    match op {
        "and" if !children.is_empty() => Expr::And(children.iter().map(node).collect()),
        "or" if !children.is_empty() => Expr::Or(children.iter().map(node).collect()),
        "not" => match children {
            [one] => Expr::Not(Box::new(node(one))),
            _ => Expr::Unknown,
        },
        "isNull" => match children {
            [one] => operand(one).map_or(Expr::Unknown, Expr::IsNull),
            _ => Expr::Unknown,
        },
        "equal" => cmp(Op::Equal),
        "lessThan" => cmp(Op::LessThan),
        "lessThanOrEqual" => cmp(Op::LessThanOrEqual),
        "greaterThan" => cmp(Op::GreaterThan),
        "greaterThanOrEqual" => cmp(Op::GreaterThanOrEqual),
        _ => Expr::Unknown,
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Ident(String),
    Number(String),
    Str(String),
    Op(&'static str),
}

fn tokens(text: &str) -> Option<Vec<Token>> {
    let mut out = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '\'' {
            // A SQL string: '' is one quote.
            let mut s = String::new();
            i += 1;
            loop {
                match chars.get(i)? {
                    '\'' if chars.get(i + 1) == Some(&'\'') => {
                        s.push('\'');
                        i += 2;
                    }
                    '\'' => {
                        i += 1;
                        break;
                    }
                    ch => {
                        s.push(*ch);
                        i += 1;
                    }
                }
            }
            out.push(Token::Str(s));
        } else if c == '`' {
            let end = chars[i + 1..].iter().position(|&ch| ch == '`')? + i + 1;
            out.push(Token::Ident(chars[i + 1..end].iter().collect()));
            i = end + 1;
        } else if c.is_ascii_digit()
            || (c == '-' && chars.get(i + 1).is_some_and(char::is_ascii_digit))
        {
            let start = i;
            i += 1;
            while chars.get(i).is_some_and(|ch| {
                ch.is_ascii_alphanumeric() || *ch == '.' || *ch == '-' || *ch == '+'
            }) {
                i += 1;
            }
            out.push(Token::Number(chars[start..i].iter().collect()));
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while chars
                .get(i)
                .is_some_and(|ch| ch.is_alphanumeric() || *ch == '_')
            {
                i += 1;
            }
            out.push(Token::Ident(chars[start..i].iter().collect()));
        } else {
            let two: String = chars[i..(i + 2).min(chars.len())].iter().collect();
            let op = ["<=", ">=", "<>", "!="]
                .into_iter()
                .find(|o| two == *o)
                .or_else(|| ["=", "<", ">"].into_iter().find(|o| o.starts_with(c)))?;
            i += op.len();
            out.push(Token::Op(op));
        }
    }
    Some(out)
}

fn sql_operand(t: &Token) -> Option<Operand> {
    match t {
        Token::Ident(name) => match name.to_ascii_lowercase().as_str() {
            "true" | "false" => Some(Operand::Literal {
                text: name.to_ascii_lowercase(),
                ty: None,
                quoted: false,
            }),
            "null" | "is" | "not" | "and" | "or" => None,
            _ => Some(Operand::Column {
                name: name.clone(),
                ty: None,
            }),
        },
        Token::Number(n) => Some(Operand::Literal {
            text: n.clone(),
            ty: None,
            quoted: false,
        }),
        Token::Str(s) => Some(Operand::Literal {
            text: s.clone(),
            ty: None,
            quoted: true,
        }),
        Token::Op(_) => None,
    }
}

/// One `predicateHints` expression.
pub fn from_sql(text: &str) -> Expr {
    let Some(tokens) = tokens(text) else {
        return Expr::Unknown;
    };
    let word = |t: &Token, w: &str| matches!(t, Token::Ident(s) if s.eq_ignore_ascii_case(w));
    match tokens.as_slice() {
        [col @ Token::Ident(_), is, null] if word(is, "is") && word(null, "null") => {
            sql_operand(col).map_or(Expr::Unknown, Expr::IsNull)
        }
        [col @ Token::Ident(_), is, not, null]
            if word(is, "is") && word(not, "not") && word(null, "null") =>
        {
            sql_operand(col).map_or(Expr::Unknown, |c| Expr::Not(Box::new(Expr::IsNull(c))))
        }
        [a, Token::Op(op), b] => {
            let (Some(a), Some(b)) = (sql_operand(a), sql_operand(b)) else {
                return Expr::Unknown;
            };
            let cmp = |op| Expr::Cmp(op, a.clone(), b.clone());
            match *op {
                "=" => cmp(Op::Equal),
                "<" => cmp(Op::LessThan),
                "<=" => cmp(Op::LessThanOrEqual),
                ">" => cmp(Op::GreaterThan),
                ">=" => cmp(Op::GreaterThanOrEqual),
                _ => Expr::Not(Box::new(cmp(Op::Equal))),
            }
        }
        _ => Expr::Unknown,
    }
}
