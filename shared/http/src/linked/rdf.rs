//! A small RDF graph and its two serializations, Turtle and JSON-LD, for the DCAT catalog: the
//! same triples written twice, so both formats always say the same thing.

use serde_json::{json, Map, Value};

/// The namespaces the documents use, with their prefixes (written in both serializations).
pub const PREFIXES: &[(&str, &str)] = &[
    ("rdf", "http://www.w3.org/1999/02/22-rdf-syntax-ns#"),
    ("rdfs", "http://www.w3.org/2000/01/rdf-schema#"),
    ("xsd", "http://www.w3.org/2001/XMLSchema#"),
    ("dcat", "http://www.w3.org/ns/dcat#"),
    ("dct", "http://purl.org/dc/terms/"),
    ("foaf", "http://xmlns.com/foaf/0.1/"),
    ("hydra", "http://www.w3.org/ns/hydra/core#"),
];

pub const RDF_TYPE: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type";

/// A node or a value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Term {
    Iri(String),
    /// A blank node, by its label (unique within one graph).
    Blank(String),
    /// A literal, with a datatype IRI or a language tag (or neither: a plain string).
    Literal {
        value: String,
        datatype: Option<&'static str>,
        language: Option<&'static str>,
    },
}

impl Term {
    pub fn iri(iri: impl Into<String>) -> Self {
        Self::Iri(iri.into())
    }

    /// A string in English.
    pub fn text(value: impl Into<String>) -> Self {
        Self::Literal {
            value: value.into(),
            datatype: None,
            language: Some("en"),
        }
    }

    /// A plain string (an identifier, a name that is no language's).
    pub fn string(value: impl Into<String>) -> Self {
        Self::Literal {
            value: value.into(),
            datatype: None,
            language: None,
        }
    }

    pub fn typed(value: impl Into<String>, datatype: &'static str) -> Self {
        Self::Literal {
            value: value.into(),
            datatype: Some(datatype),
            language: None,
        }
    }
}

/// Triples in the order they were added; subjects are written in order of first appearance.
#[derive(Debug, Default)]
pub struct Graph {
    triples: Vec<(Term, String, Term)>,
}

impl Graph {
    pub fn add(&mut self, subject: &Term, predicate: &str, object: Term) {
        self.triples
            .push((subject.clone(), predicate.to_owned(), object));
    }

    pub fn len(&self) -> usize {
        self.triples.len()
    }

    pub fn is_empty(&self) -> bool {
        self.triples.is_empty()
    }

    /// Subjects in order of first appearance, each with its (predicate, object) pairs in order.
    fn by_subject(&self) -> Vec<(&Term, Vec<(&str, &Term)>)> {
        let mut out: Vec<(&Term, Vec<(&str, &Term)>)> = Vec::new();
        for (s, p, o) in &self.triples {
            match out.iter_mut().find(|(subject, _)| *subject == s) {
                Some((_, pairs)) => pairs.push((p, o)),
                None => out.push((s, vec![(p, o)])),
            }
        }
        out
    }

    /// The graph in Turtle.
    pub fn to_turtle(&self) -> String {
        let mut out = String::new();
        for (prefix, iri) in PREFIXES {
            out.push_str(&format!("@prefix {prefix}: <{iri}> .\n"));
        }
        for (subject, pairs) in self.by_subject() {
            out.push('\n');
            out.push_str(&turtle_term(subject));
            for (i, (predicate, object)) in pairs.iter().enumerate() {
                out.push_str(if i == 0 { " " } else { " ;\n    " });
                if *predicate == RDF_TYPE {
                    out.push('a');
                } else {
                    out.push_str(&turtle_iri(predicate));
                }
                out.push(' ');
                out.push_str(&turtle_term(object));
            }
            out.push_str(" .\n");
        }
        out
    }

    /// The graph in JSON-LD: one node object per subject in `@graph`, properties as compact
    /// IRIs over [`PREFIXES`], every value explicit (`@id`, or `@value` with its type or
    /// language).
    pub fn to_json_ld(&self) -> Value {
        let context: Map<String, Value> = PREFIXES
            .iter()
            .map(|(prefix, iri)| ((*prefix).to_owned(), json!(iri)))
            .collect();
        let nodes: Vec<Value> = self
            .by_subject()
            .into_iter()
            .map(|(subject, pairs)| {
                let mut node = Map::new();
                node.insert("@id".to_owned(), json!(node_id(subject)));
                for (predicate, object) in pairs {
                    let (key, value) = if predicate == RDF_TYPE {
                        ("@type".to_owned(), json!(node_id(object)))
                    } else {
                        (compact(predicate), json_value(object))
                    };
                    match node.get_mut(&key) {
                        Some(Value::Array(values)) => values.push(value),
                        _ => {
                            node.insert(key, Value::Array(vec![value]));
                        }
                    }
                }
                Value::Object(node)
            })
            .collect();
        json!({"@context": context, "@graph": nodes})
    }
}

fn node_id(term: &Term) -> String {
    match term {
        Term::Iri(iri) => iri.clone(),
        Term::Blank(label) => format!("_:{label}"),
        Term::Literal { value, .. } => value.clone(),
    }
}

fn json_value(term: &Term) -> Value {
    match term {
        Term::Iri(_) | Term::Blank(_) => json!({"@id": node_id(term)}),
        Term::Literal {
            value,
            datatype: Some(datatype),
            ..
        } => json!({"@value": value, "@type": datatype}),
        Term::Literal {
            value,
            language: Some(language),
            ..
        } => json!({"@value": value, "@language": language}),
        Term::Literal { value, .. } => json!({ "@value": value }),
    }
}

/// `http://purl.org/dc/terms/title` as `dct:title` when a prefix covers it and the rest is a
/// plain name; the full IRI otherwise.
fn compact(iri: &str) -> String {
    prefixed(iri).unwrap_or_else(|| iri.to_owned())
}

fn prefixed(iri: &str) -> Option<String> {
    PREFIXES.iter().find_map(|(prefix, ns)| {
        let local = iri.strip_prefix(ns)?;
        let plain = local.starts_with(|c: char| c.is_ascii_alphabetic())
            && local.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        plain.then(|| format!("{prefix}:{local}"))
    })
}

fn turtle_iri(iri: &str) -> String {
    prefixed(iri).unwrap_or_else(|| {
        let mut out = String::from("<");
        for c in iri.chars() {
            if c <= ' ' || matches!(c, '<' | '>' | '"' | '{' | '}' | '|' | '^' | '`' | '\\') {
                out.push_str(&format!("\\u{:04X}", c as u32));
            } else {
                out.push(c);
            }
        }
        out.push('>');
        out
    })
}

fn turtle_term(term: &Term) -> String {
    match term {
        Term::Iri(iri) => turtle_iri(iri),
        Term::Blank(label) => format!("_:{label}"),
        Term::Literal {
            value,
            datatype,
            language,
        } => {
            let mut out = String::from("\"");
            for c in value.chars() {
                match c {
                    '"' => out.push_str("\\\""),
                    '\\' => out.push_str("\\\\"),
                    '\n' => out.push_str("\\n"),
                    '\r' => out.push_str("\\r"),
                    '\t' => out.push_str("\\t"),
                    c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
                    c => out.push(c),
                }
            }
            out.push('"');
            if let Some(datatype) = datatype {
                out.push_str("^^");
                out.push_str(&turtle_iri(datatype));
            } else if let Some(language) = language {
                out.push('@');
                out.push_str(language);
            }
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Graph {
        let mut g = Graph::default();
        let s = Term::iri("https://x.example/a b");
        g.add(&s, RDF_TYPE, Term::iri("http://www.w3.org/ns/dcat#Dataset"));
        g.add(
            &s,
            "http://purl.org/dc/terms/title",
            Term::text("A \"quoted\"\ntitle\\"),
        );
        g.add(
            &s,
            "http://www.w3.org/ns/dcat#byteSize",
            Term::typed("12", "http://www.w3.org/2001/XMLSchema#nonNegativeInteger"),
        );
        g.add(
            &s,
            "http://purl.org/dc/terms/publisher",
            Term::Blank("p".into()),
        );
        g
    }

    #[test]
    fn turtle_escapes_literals_and_iris_and_uses_prefixes() {
        let ttl = sample().to_turtle();
        assert!(
            ttl.contains("<https://x.example/a\\u0020b> a dcat:Dataset ;"),
            "{ttl}"
        );
        assert!(
            ttl.contains("dct:title \"A \\\"quoted\\\"\\ntitle\\\\\"@en"),
            "{ttl}"
        );
        assert!(
            ttl.contains("dcat:byteSize \"12\"^^xsd:nonNegativeInteger"),
            "{ttl}"
        );
        assert!(ttl.contains("dct:publisher _:p ."), "{ttl}");
    }

    #[test]
    fn json_ld_holds_the_same_statements() {
        let doc = sample().to_json_ld();
        let node = &doc["@graph"][0];
        assert_eq!(node["@id"], "https://x.example/a b");
        assert_eq!(node["@type"], json!(["http://www.w3.org/ns/dcat#Dataset"]));
        assert_eq!(node["dct:title"][0]["@language"], "en");
        assert_eq!(node["dcat:byteSize"][0]["@value"], "12");
        assert_eq!(node["dct:publisher"][0]["@id"], "_:p");
        assert_eq!(doc["@context"]["dct"], "http://purl.org/dc/terms/");
    }
}
