; scry's own definitions for TypeScript and TSX (the grammar's own tags add
; little over JavaScript's).
(interface_declaration name: (type_identifier) @name) @definition.interface
(type_alias_declaration name: (type_identifier) @name) @definition.type
(enum_declaration name: (identifier) @name) @definition.enum
(class_declaration name: (type_identifier) @name) @definition.class
(abstract_class_declaration name: (type_identifier) @name) @definition.class
(public_field_definition name: (property_identifier) @name) @definition.field
(method_signature name: (property_identifier) @name) @definition.method
(abstract_method_signature name: (property_identifier) @name) @definition.method
(property_signature name: (property_identifier) @name) @definition.property
(program (lexical_declaration (variable_declarator name: (identifier) @name) @definition.variable))
(export_statement (lexical_declaration (variable_declarator name: (identifier) @name) @definition.variable))
(class_declaration name: (type_identifier) @impl.name (class_heritage (extends_clause value: [(identifier) @impl.parent (member_expression property: (property_identifier) @impl.parent)]))) @implementation
(class_declaration name: (type_identifier) @impl.name (class_heritage (implements_clause [(type_identifier) @impl.parent (generic_type name: (type_identifier) @impl.parent)]))) @implementation
(interface_declaration name: (type_identifier) @impl.name (extends_type_clause [(type_identifier) @impl.parent (generic_type name: (type_identifier) @impl.parent)])) @implementation
; Local bindings.
(required_parameter pattern: (identifier) @local)
(optional_parameter pattern: (identifier) @local)
(variable_declarator name: (identifier) @local)
