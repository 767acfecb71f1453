//! The one module through which scry sees LSP types (`gen-lsp-types`,
//! pinned). Everything else imports `scry_lsp::types::…`.

pub use gen_lsp_types::*;
