//! scry-lsp
