//! Numbers written so that they read back exactly: doubles and 128-bit integers as strings
//! (Rust's shortest round-trip form; `inf`, `-inf`), and values as `{"i": "12"}`,
//! `{"f": "1.5"}`, `{"b": true}` or `{"t": "text"}`.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::values::{float_key, float_of, Key};

pub(super) mod f64 {
    use super::*;

    pub fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format!("{v:?}"))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        let text = String::deserialize(d)?;
        text.parse()
            .map_err(|_| serde::de::Error::custom(format!("not a number: {text:?}")))
    }
}

pub(super) mod i128 {
    use super::*;

    pub fn serialize<S: Serializer>(v: &i128, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&v.to_string())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<i128, D::Error> {
        let text = String::deserialize(d)?;
        text.parse()
            .map_err(|_| serde::de::Error::custom(format!("not an integer: {text:?}")))
    }
}

#[derive(Serialize, Deserialize)]
enum Written {
    #[serde(rename = "b")]
    Bool(bool),
    #[serde(rename = "i")]
    Int(#[serde(with = "i128")] i128),
    #[serde(rename = "f")]
    Float(#[serde(with = "f64")] f64),
    #[serde(rename = "t")]
    Text(String),
}

impl Serialize for Key {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Key::Bool(b) => Written::Bool(*b),
            Key::Int(i) => Written::Int(*i),
            Key::Float(bits) => Written::Float(float_of(*bits)),
            Key::Text(t) => Written::Text(t.clone()),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Key, D::Error> {
        Ok(match Written::deserialize(d)? {
            Written::Bool(b) => Key::Bool(b),
            Written::Int(i) => Key::Int(i),
            Written::Float(f) => float_key(f),
            Written::Text(t) => Key::Text(t),
        })
    }
}
