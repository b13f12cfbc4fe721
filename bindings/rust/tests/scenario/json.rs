//! A small JSON reader (RFC 8259) for the scenario's data file: the crate
//! depends on nothing outside the standard library, and Debian 12's cargo
//! builds it offline, so serde_json is not at hand.

/// A JSON value. Objects keep their members in the file's order.
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Number(f64),
    String(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl Json {
    /// The member @key of an object; None for a missing key or a non-object.
    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(members) => members.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::String(s) => Some(s),
            _ => None,
        }
    }

    /// A whole number from 0 to 2^53; None for anything else.
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Json::Number(n) if *n >= 0.0 && n.fract() == 0.0 && *n <= 9007199254740992.0 => {
                Some(*n as u64)
            }
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&[Json]> {
        match self {
            Json::Array(items) => Some(items),
            _ => None,
        }
    }

    pub fn as_object(&self) -> Option<&[(String, Json)]> {
        match self {
            Json::Object(members) => Some(members),
            _ => None,
        }
    }
}

/// Parses the whole of @text as one JSON value; the error names the byte
/// offset where reading stopped.
pub fn parse(text: &str) -> Result<Json, String> {
    let mut r = Reader {
        s: text.as_bytes(),
        at: 0,
    };
    let value = r.value()?;
    r.space();
    if r.at != r.s.len() {
        return Err(r.error("text after the value"));
    }
    Ok(value)
}

struct Reader<'a> {
    s: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn error(&self, what: &str) -> String {
        format!("JSON: {} at byte {}", what, self.at)
    }

    fn space(&mut self) {
        while self.at < self.s.len() && matches!(self.s[self.at], b' ' | b'\t' | b'\n' | b'\r') {
            self.at += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.at).copied()
    }

    fn expect(&mut self, byte: u8) -> Result<(), String> {
        self.space();
        if self.peek() != Some(byte) {
            return Err(self.error(&format!("expected '{}'", byte as char)));
        }
        self.at += 1;
        Ok(())
    }

    fn literal(&mut self, word: &str, value: Json) -> Result<Json, String> {
        if !self.s[self.at..].starts_with(word.as_bytes()) {
            return Err(self.error("unknown literal"));
        }
        self.at += word.len();
        Ok(value)
    }

    fn value(&mut self) -> Result<Json, String> {
        self.space();
        match self.peek() {
            Some(b'{') => self.object(),
            Some(b'[') => self.array(),
            Some(b'"') => self.string().map(Json::String),
            Some(b't') => self.literal("true", Json::Bool(true)),
            Some(b'f') => self.literal("false", Json::Bool(false)),
            Some(b'n') => self.literal("null", Json::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(self.error("expected a value")),
        }
    }

    /// A comma-separated list up to @close, each item read by @item.
    fn items<F: FnMut(&mut Self) -> Result<(), String>>(
        &mut self,
        close: u8,
        mut item: F,
    ) -> Result<(), String> {
        self.at += 1; // the opening bracket
        self.space();
        if self.peek() == Some(close) {
            self.at += 1;
            return Ok(());
        }
        loop {
            item(self)?;
            self.space();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(c) if c == close => {
                    self.at += 1;
                    return Ok(());
                }
                _ => return Err(self.error("expected ',' or the closing bracket")),
            }
        }
    }

    fn object(&mut self) -> Result<Json, String> {
        let mut members = Vec::new();
        self.items(b'}', |r| {
            r.space();
            if r.peek() != Some(b'"') {
                return Err(r.error("expected a member name"));
            }
            let key = r.string()?;
            r.expect(b':')?;
            members.push((key, r.value()?));
            Ok(())
        })?;
        Ok(Json::Object(members))
    }

    fn array(&mut self) -> Result<Json, String> {
        let mut items = Vec::new();
        self.items(b']', |r| {
            items.push(r.value()?);
            Ok(())
        })?;
        Ok(Json::Array(items))
    }

    fn number(&mut self) -> Result<Json, String> {
        let start = self.at;
        while let Some(b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9') = self.peek() {
            self.at += 1;
        }
        let text =
            std::str::from_utf8(&self.s[start..self.at]).map_err(|_| self.error("bad number"))?;
        text.parse::<f64>()
            .map(Json::Number)
            .map_err(|_| self.error("bad number"))
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let digits = self
            .s
            .get(self.at..self.at + 4)
            .ok_or_else(|| self.error("short \\u escape"))?;
        let text = std::str::from_utf8(digits).map_err(|_| self.error("bad \\u escape"))?;
        let code = u32::from_str_radix(text, 16).map_err(|_| self.error("bad \\u escape"))?;
        self.at += 4;
        Ok(code)
    }

    /// A \u escape after its backslash and 'u', a surrogate pair as one.
    fn unicode_escape(&mut self) -> Result<char, String> {
        let high = self.hex4()?;
        let code = if (0xd800..0xdc00).contains(&high) {
            if !self.s[self.at..].starts_with(b"\\u") {
                return Err(self.error("lone surrogate"));
            }
            self.at += 2;
            let low = self.hex4()?;
            if !(0xdc00..0xe000).contains(&low) {
                return Err(self.error("lone surrogate"));
            }
            0x10000 + ((high - 0xd800) << 10) + (low - 0xdc00)
        } else {
            high
        };
        char::from_u32(code).ok_or_else(|| self.error("lone surrogate"))
    }

    fn string(&mut self) -> Result<String, String> {
        self.at += 1; // the opening quote
        let mut out = Vec::new();
        loop {
            let c = self
                .peek()
                .ok_or_else(|| self.error("unterminated string"))?;
            self.at += 1;
            match c {
                b'"' => break,
                b'\\' => {
                    let e = self
                        .peek()
                        .ok_or_else(|| self.error("unterminated string"))?;
                    self.at += 1;
                    let ch = match e {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => self.unicode_escape()?,
                        _ => return Err(self.error("unknown escape")),
                    };
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                }
                0..=0x1f => return Err(self.error("control character in a string")),
                _ => out.push(c),
            }
        }
        // The input is a &str and escapes add whole characters: valid UTF-8.
        String::from_utf8(out).map_err(|_| self.error("bad UTF-8"))
    }
}

#[cfg(test)]
mod tests {
    use super::{parse, Json};

    #[test]
    fn reads_every_kind_of_value() {
        let v = parse(
            " {\"a\": [1, -2.5e1, true, false, null], \"s\": \"q\\\"\\n\\u00e9\\ud83d\\ude00/\"} ",
        )
        .unwrap();
        assert_eq!(
            v,
            Json::Object(vec![
                (
                    "a".to_string(),
                    Json::Array(vec![
                        Json::Number(1.0),
                        Json::Number(-25.0),
                        Json::Bool(true),
                        Json::Bool(false),
                        Json::Null
                    ])
                ),
                (
                    "s".to_string(),
                    Json::String("q\"\n\u{e9}\u{1f600}/".to_string())
                ),
            ])
        );
        assert_eq!(parse("[]").unwrap(), Json::Array(vec![]));
        assert_eq!(parse("{}").unwrap(), Json::Object(vec![]));
    }

    #[test]
    fn refuses_malformed_text() {
        for bad in [
            "",
            "[1,]",
            "{\"a\" 1}",
            "\"open",
            "[1] 2",
            "\"\\ud800\"",
            "\"\\x\"",
            "nul",
            "\"a\nb\"",
        ] {
            assert!(parse(bad).is_err(), "{:?} was accepted", bad);
        }
    }
}
