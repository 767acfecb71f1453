; scry's own definitions for JavaScript.
(field_definition property: (property_identifier) @name) @definition.field
(program (lexical_declaration (variable_declarator name: (identifier) @name) @definition.variable))
(export_statement (lexical_declaration (variable_declarator name: (identifier) @name) @definition.variable))
(class_declaration name: (identifier) @impl.name (class_heritage [(identifier) @impl.parent (member_expression property: (property_identifier) @impl.parent)])) @implementation
; Local bindings.
(formal_parameters (identifier) @local)
(variable_declarator name: (identifier) @local)
