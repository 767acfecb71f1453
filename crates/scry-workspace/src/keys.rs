//! Key names of configuration files: loose spelling folded to one
//! canonical form ([`canon`]: `file_types`, `file-types` and `fileTypes` are
//! one key) and the canonical name of each server-entry key with its
//! aliases ([`server_key`]). Shared by scry's own configuration layers
//! ([`crate::config`]) and other agents' files ([`crate::seed_config`]).

/// Lower-case alphanumerics only: `file_types`, `file-types`, `fileTypes`
/// all become `filetypes`.
pub(crate) fn canon(key: &str) -> String {
    key.chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

pub(crate) fn server_key(key: &str) -> Option<&'static str> {
    Some(match canon(key).as_str() {
        "id" => "id",
        "kind" => "kind",
        "command" | "cmd" => "command",
        "args" | "arguments" => "args",
        "filetypes" | "filetype" | "extensions" => "fileTypes",
        "rootmarkers" | "roots" | "rootpatterns" => "rootMarkers",
        "languageid" => "languageId",
        "languageids" => "languageIds",
        "settings" => "settings",
        "initializationoptions" | "initoptions" => "initializationOptions",
        "env" | "environment" => "env",
        "disabled" => "disabled",
        "enabled" => "enabled",
        "islinter" | "linter" => "isLinter",
        "singlequoteischar" => "singleQuoteIsChar",
        "alternativeto" => "alternativeTo",
        "parser" => "parser",
        "mode" => "mode",
        "languages" => "languages",
        "install" => "install",
        "versionargs" => "versionArgs",
        "hints" => "hints",
        "memorymib" | "memory" => "memoryMiB",
        "readsenv" => "readsEnv",
        "pathprograms" => "pathPrograms",
        "startuplog" => "startupLog",
        "projectroot" | "rootstrategy" => "projectRoot",
        _ => return None,
    })
}
