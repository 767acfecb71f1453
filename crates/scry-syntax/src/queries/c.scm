; scry's own definitions for C.
(struct_specifier name: (type_identifier) @name body: (_)) @definition.struct
(union_specifier name: (type_identifier) @name body: (_)) @definition.struct
(enum_specifier name: (type_identifier) @name body: (_)) @definition.enum
(enumerator name: (identifier) @name) @definition.enum_member
(type_definition declarator: (type_identifier) @name) @definition.type
(preproc_def name: (identifier) @name) @definition.macro
(preproc_function_def name: (identifier) @name) @definition.macro
(field_declaration declarator: (field_identifier) @name) @definition.field
(translation_unit (declaration declarator: (init_declarator declarator: (identifier) @name)) @definition.variable)
; Local bindings.
(parameter_declaration declarator: (identifier) @local)
(parameter_declaration declarator: (pointer_declarator declarator: (identifier) @local))
(declaration declarator: (init_declarator declarator: (identifier) @local))
(declaration declarator: (identifier) @local)
