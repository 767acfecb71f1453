; scry's own definitions for C++.
(struct_specifier name: (type_identifier) @name body: (_)) @definition.struct
(union_specifier name: (type_identifier) @name body: (_)) @definition.struct
(enum_specifier name: (type_identifier) @name body: (_)) @definition.enum
(class_specifier name: (type_identifier) @name body: (_)) @definition.class
(enumerator name: (identifier) @name) @definition.enum_member
(type_definition declarator: (type_identifier) @name) @definition.type
(alias_declaration name: (type_identifier) @name) @definition.type
(namespace_definition name: (namespace_identifier) @name) @definition.module
(preproc_def name: (identifier) @name) @definition.macro
(preproc_function_def name: (identifier) @name) @definition.macro
(field_declaration declarator: (field_identifier) @name) @definition.field
(field_declaration declarator: (function_declarator declarator: (field_identifier) @name)) @definition.method
(function_definition declarator: (function_declarator declarator: (qualified_identifier scope: (namespace_identifier) @container name: (identifier) @name))) @definition.method
(class_specifier name: (type_identifier) @impl.name (base_class_clause [(type_identifier) @impl.parent (qualified_identifier name: (type_identifier) @impl.parent) (template_type name: (type_identifier) @impl.parent)])) @implementation
(struct_specifier name: (type_identifier) @impl.name (base_class_clause [(type_identifier) @impl.parent (qualified_identifier name: (type_identifier) @impl.parent) (template_type name: (type_identifier) @impl.parent)])) @implementation
; Local bindings.
(parameter_declaration declarator: (identifier) @local)
(parameter_declaration declarator: (pointer_declarator declarator: (identifier) @local))
(declaration declarator: (init_declarator declarator: (identifier) @local))
(declaration declarator: (identifier) @local)
