//! The one module through which scry sees LSP types (`gen-lsp-types`,
//! pinned). Everything else imports `scry_lsp_session::types::…`.

pub use gen_lsp_types::*;
