//! A symbol name as a caller writes it, split into its qualifiers and the
//! name itself ([`SymbolName::parse`]): pure text, shared by validation
//! (a rename to the same name), the engine's name finding
//! (`scry_ops::resolve`) and the renderer.
//!
//! Invariant: `::`, `.`, `/` and `#` separate qualifiers (empty segments
//! dropped); a string with no segment left is the name, whole.

/// A symbol name split into qualifier segments and the name itself:
/// `Inventory::restock`, `Inventory.restock`, `mod/fn`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SymbolName {
    pub qualifiers: Vec<String>,
    pub name: String,
}

impl SymbolName {
    pub fn parse(s: &str) -> SymbolName {
        let s = s.trim();
        let parts: Vec<String> = s
            .split("::")
            .flat_map(|p| p.split(['.', '/', '#']))
            .map(|p| p.trim().to_string())
            .filter(|p| !p.is_empty())
            .collect();
        match parts.split_last() {
            Some((name, quals)) => SymbolName {
                qualifiers: quals.to_vec(),
                name: name.clone(),
            },
            None => SymbolName {
                qualifiers: Vec::new(),
                name: s.to_string(),
            },
        }
    }

    pub fn is_qualified(&self) -> bool {
        !self.qualifiers.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_qualified_names() {
        let s = SymbolName::parse("Inventory::restock");
        assert_eq!(s.qualifiers, vec!["Inventory"]);
        assert_eq!(s.name, "restock");
        assert_eq!(SymbolName::parse("Class.method").qualifiers, vec!["Class"]);
        assert_eq!(SymbolName::parse("mod/fn").name, "fn");
        assert!(!SymbolName::parse("total").is_qualified());
    }
}
