//! File skipping: a query's `jsonPredicateHints` and `predicateHints`, judged against what the
//! manifest knows of each file (its partition values and its per-column minimum, maximum and
//! null count) and of each chunk of files (its partition values' ranges).
//!
//! **Sound, never exact.** A file is skipped only when the predicate is certainly false (or
//! null) for every one of its rows; anything this server does not understand (an op, a value
//! type, a column it does not have, a column compared with another, a literal that does not parse
//! as its type, a column type it cannot order, such as timestamps) counts as "could be anything",
//! so it never skips a file: the protocol's filtering is best effort, and the client applies the
//! predicate to the rows it reads. Each sub-expression is judged as the set of outcomes it may
//! have over a file's rows ([`Tri`]: true, false, null), `and`, `or` and `not` combining the sets
//! as SQL's three-valued logic does, which over-approximates what the rows can do.
//!
//! **Types.** A comparison is judged when the column and the literal are of one family: `int` and
//! `long` (and the newer `float`, `double`) with integer and floating-point columns, `string`
//! with text columns, `date` with date columns, `bool` with boolean columns. A mismatch (a
//! `string` literal against an integer column) is not understood. Text statistics may be cut to
//! 64 bytes ([`catalog::files::MAX_STAT_TEXT_BYTES`]); a cut minimum is still a lower bound and
//! a cut maximum an upper bound, so they judge soundly. Floating-point statistics leave NaN out,
//! as Parquet's and Delta's do.

mod domain;
mod parse;

#[cfg(test)]
mod tests;

use std::cmp::Ordering;

use catalog::files::{ChunkSummary, FileEntry, PartitionType, PartitionValue, Summary};

pub use domain::Tri;
use domain::{Domain, Val};
pub use parse::{from_json, from_sql};

/// A comparison's operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Equal,
    LessThan,
    LessThanOrEqual,
    GreaterThan,
    GreaterThanOrEqual,
}

impl Op {
    /// The operator with its operands swapped (`a < b` is `b > a`).
    fn flipped(self) -> Self {
        match self {
            Self::Equal => Self::Equal,
            Self::LessThan => Self::GreaterThan,
            Self::LessThanOrEqual => Self::GreaterThanOrEqual,
            Self::GreaterThan => Self::LessThan,
            Self::GreaterThanOrEqual => Self::LessThanOrEqual,
        }
    }

    fn holds(self, o: Ordering) -> bool {
        match self {
            Self::Equal => o.is_eq(),
            Self::LessThan => o.is_lt(),
            Self::LessThanOrEqual => o.is_le(),
            Self::GreaterThan => o.is_gt(),
            Self::GreaterThanOrEqual => o.is_ge(),
        }
    }
}

/// A value type as the JSON predicates name it (`int` and `long` are one family here, as are
/// `float` and `double`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueType {
    Bool,
    Int,
    Float,
    String,
    Date,
}

/// One side of a comparison, as parsed (not yet checked against the table's columns).
#[derive(Debug, Clone, PartialEq)]
pub enum Operand {
    /// A column; `ty` as the JSON predicate declares it (`None` in SQL: the column's own).
    Column { name: String, ty: Option<ValueType> },
    /// A literal's text; `ty` as declared (`None` in SQL: typed by the column it meets).
    /// `quoted`: written as a SQL string (`'2024-01-01'`).
    Literal {
        text: String,
        ty: Option<ValueType>,
        quoted: bool,
    },
}

/// A predicate, as parsed.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    And(Vec<Expr>),
    Or(Vec<Expr>),
    Not(Box<Expr>),
    IsNull(Operand),
    Cmp(Op, Operand, Operand),
    /// Anything not understood: could be anything.
    Unknown,
}

/// What a column holds, for ordering its values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Bool,
    Int,
    Float,
    Date,
    Text,
    /// A type whose statistics this server does not order (timestamps, decimals, binary, nested).
    Other,
}

impl Kind {
    /// A file column's kind, from its stored dtype (pyarrow's type name).
    pub fn of_dtype(dtype: &str) -> Self {
        match dtype {
            "bool" => Self::Bool,
            "int8" | "int16" | "int32" | "int64" | "uint8" | "uint16" | "uint32" | "uint64" => {
                Self::Int
            }
            "halffloat" | "float" | "double" => Self::Float,
            "date32[day]" | "date64[ms]" => Self::Date,
            "string" | "large_string" | "utf8" | "large_utf8" | "string_view" => Self::Text,
            _ => Self::Other,
        }
    }

    fn of_partition(kind: PartitionType) -> Self {
        match kind {
            PartitionType::Int64 => Self::Int,
            PartitionType::Date => Self::Date,
            PartitionType::String => Self::Text,
        }
    }

    fn accepts(self, ty: ValueType) -> bool {
        matches!(
            (self, ty),
            (Self::Bool, ValueType::Bool)
                | (Self::Int | Self::Float, ValueType::Int | ValueType::Float)
                | (Self::Text, ValueType::String)
                | (Self::Date, ValueType::Date)
        )
    }
}

/// Where a column's facts are: a partition column's value, or a file column's statistics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// Index into [`Summary::partitions`] (and each file's partition values).
    Partition(usize),
    /// Index into [`Summary::columns`] (and each file's statistics).
    Stats(usize),
}

#[derive(Debug, Clone, PartialEq)]
struct Column {
    name: String,
    kind: Kind,
    source: Source,
}

/// A version's columns, as a predicate names them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Columns(Vec<Column>);

impl Columns {
    /// The columns of a version of many files: each file column with its dtype (from the
    /// version's statistics, `dtype_of`), then the partition columns.
    pub fn of(summary: &Summary, dtype_of: impl Fn(&str) -> Option<String>) -> Self {
        let mut out: Vec<Column> = summary
            .columns
            .iter()
            .enumerate()
            .map(|(i, name)| Column {
                name: name.clone(),
                kind: dtype_of(name).map_or(Kind::Other, |d| Kind::of_dtype(&d)),
                source: Source::Stats(i),
            })
            .collect();
        out.extend(summary.partitions.iter().enumerate().map(|(i, p)| Column {
            name: p.name.clone(),
            kind: Kind::of_partition(p.kind),
            source: Source::Partition(i),
        }));
        Self(out)
    }

    /// The column `name` names: exactly, else the one column equal to it ignoring ASCII case
    /// (Delta's column names are case-insensitive).
    fn find(&self, name: &str) -> Option<&Column> {
        self.0.iter().find(|c| c.name == name).or_else(|| {
            let mut same = self.0.iter().filter(|c| c.name.eq_ignore_ascii_case(name));
            match (same.next(), same.next()) {
                (Some(one), None) => Some(one),
                _ => None,
            }
        })
    }
}

/// A predicate checked against the version's columns, ready to judge files.
#[derive(Debug, Clone, PartialEq)]
enum Check {
    And(Vec<Check>),
    Or(Vec<Check>),
    Not(Box<Check>),
    Const(Tri),
    IsNull(Column),
    Cmp(Column, Op, Val),
}

/// What a predicate says of one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Certainly no row passes: leave the file out.
    Skip,
    /// Some rows may pass.
    Maybe,
    /// Every row certainly passes (always so without a predicate): its rows count toward
    /// `limitHint`.
    AllRows,
}

/// A query's hints, AND-ed, against a version's columns. Empty when the query has none.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Predicate(Option<Check>);

impl Predicate {
    /// The AND of `exprs` (each hint parsed), checked against `columns`.
    pub fn new(exprs: Vec<Expr>, columns: &Columns) -> Self {
        let mut checks: Vec<Check> = exprs.iter().map(|e| compile(e, columns)).collect();
        match checks.len() {
            0 => Self(None),
            1 => Self(checks.pop()),
            _ => Self(Some(Check::And(checks))),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    /// What the predicate says of `file` (`summary`'s: its statistics in that order).
    pub fn judge(&self, file: &FileEntry) -> Verdict {
        let Some(check) = &self.0 else {
            return Verdict::AllRows;
        };
        let facts = |c: &Column| match c.source {
            Source::Partition(i) => {
                Domain::exact(file.partitions.get(i).and_then(Val::of_partition))
            }
            Source::Stats(i) => Domain::of_stats(
                file.stats.get(i).and_then(Option::as_ref),
                file.rows,
                c.kind,
            ),
        };
        let tri = eval(check, &facts);
        if !tri.can_true {
            Verdict::Skip
        } else if !tri.can_false && !tri.can_null {
            Verdict::AllRows
        } else {
            Verdict::Maybe
        }
    }

    /// Whether some file of `chunk` may pass: judged on its partition values' ranges alone.
    pub fn may_match_chunk(&self, summary: &Summary, chunk: &ChunkSummary) -> bool {
        let Some(check) = &self.0 else {
            return true;
        };
        let facts = |c: &Column| match c.source {
            Source::Partition(i) => match chunk.partitions.get(i) {
                // A range that holds neither a value nor a null says nothing.
                None => Domain::UNKNOWN,
                Some(range) if !range.nulls && range.min.is_none() && range.max.is_none() => {
                    Domain::UNKNOWN
                }
                Some(range) => {
                    let kind = summary.partitions.get(i).map(|p| p.kind);
                    let bound = |b: &Option<String>| {
                        let v = PartitionValue::parse(Some(b.as_deref()?), kind?)?;
                        Val::of_partition(&v)
                    };
                    Domain {
                        may_null: range.nulls,
                        may_value: range.min.is_some() || range.max.is_some(),
                        lo: bound(&range.min),
                        hi: bound(&range.max),
                    }
                }
            },
            Source::Stats(_) => Domain::UNKNOWN,
        };
        eval(check, &facts).can_true
    }
}

fn compile(expr: &Expr, columns: &Columns) -> Check {
    let all = |es: &[Expr]| es.iter().map(|e| compile(e, columns)).collect();
    match expr {
        Expr::And(es) if !es.is_empty() => Check::And(all(es)),
        Expr::Or(es) if !es.is_empty() => Check::Or(all(es)),
        Expr::Not(e) => Check::Not(Box::new(compile(e, columns))),
        Expr::IsNull(Operand::Column { name, ty }) => match column(columns, name, *ty) {
            Some(c) => Check::IsNull(c),
            None => Check::Const(Tri::ANY),
        },
        Expr::Cmp(op, a, b) => comparison(*op, a, b, columns),
        _ => Check::Const(Tri::ANY),
    }
}

/// The column `name` names, if it is of a kind `ty` (when declared) belongs to and one whose
/// values can be ordered.
fn column(columns: &Columns, name: &str, ty: Option<ValueType>) -> Option<Column> {
    let c = columns.find(name)?;
    if c.kind == Kind::Other || ty.is_some_and(|t| !c.kind.accepts(t)) {
        return None;
    }
    Some(c.clone())
}

/// A literal's value against a column of `kind`.
fn literal(text: &str, ty: Option<ValueType>, quoted: bool, kind: Kind) -> Option<Val> {
    let ty = match ty {
        Some(t) => t,
        // SQL: a quoted literal is text or a date; a bare one a number or a boolean.
        None => match (kind, quoted) {
            (Kind::Text, true) => ValueType::String,
            (Kind::Date, true) => ValueType::Date,
            (Kind::Int, false) => {
                if text.contains(['.', 'e', 'E']) {
                    ValueType::Float
                } else {
                    ValueType::Int
                }
            }
            (Kind::Float, false) => ValueType::Float,
            (Kind::Bool, false) => ValueType::Bool,
            _ => return None,
        },
    };
    if !kind.accepts(ty) {
        return None;
    }
    Val::parse(text, ty)
}

fn comparison(op: Op, a: &Operand, b: &Operand, columns: &Columns) -> Check {
    let any = Check::Const(Tri::ANY);
    match (a, b) {
        (
            Operand::Column { name, ty },
            Operand::Literal {
                text,
                ty: lt,
                quoted,
            },
        )
        | (
            Operand::Literal {
                text,
                ty: lt,
                quoted,
            },
            Operand::Column { name, ty },
        ) => {
            let op = if matches!(a, Operand::Column { .. }) {
                op
            } else {
                op.flipped()
            };
            let Some(c) = column(columns, name, *ty) else {
                return any;
            };
            match literal(text, *lt, *quoted, c.kind) {
                Some(v) => Check::Cmp(c, op, v),
                None => any,
            }
        }
        (
            Operand::Literal {
                text: x,
                ty: Some(tx),
                ..
            },
            Operand::Literal {
                text: y,
                ty: Some(ty),
                ..
            },
        ) => match (Val::parse(x, *tx), Val::parse(y, *ty)) {
            (Some(x), Some(y)) => match x.compare(&y) {
                Some(o) => Check::Const(Tri::exactly(op.holds(o))),
                None => any,
            },
            _ => any,
        },
        // Column against column, untyped literals: not judged.
        _ => any,
    }
}

fn eval(check: &Check, facts: &impl Fn(&Column) -> Domain) -> Tri {
    match check {
        Check::Const(t) => *t,
        Check::And(cs) => {
            let ts: Vec<Tri> = cs.iter().map(|c| eval(c, facts)).collect();
            Tri {
                can_true: ts.iter().all(|t| t.can_true),
                can_false: ts.iter().any(|t| t.can_false),
                can_null: ts.iter().any(|t| t.can_null),
            }
        }
        Check::Or(cs) => {
            let ts: Vec<Tri> = cs.iter().map(|c| eval(c, facts)).collect();
            Tri {
                can_true: ts.iter().any(|t| t.can_true),
                can_false: ts.iter().all(|t| t.can_false),
                can_null: ts.iter().any(|t| t.can_null),
            }
        }
        Check::Not(c) => {
            let t = eval(c, facts);
            Tri {
                can_true: t.can_false,
                can_false: t.can_true,
                can_null: t.can_null,
            }
        }
        Check::IsNull(c) => {
            let d = facts(c);
            Tri {
                can_true: d.may_null,
                can_false: d.may_value,
                can_null: false,
            }
        }
        Check::Cmp(c, op, v) => facts(c).compare(*op, v),
    }
}
