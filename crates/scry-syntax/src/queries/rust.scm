; scry's own definitions for Rust, on top of the grammar's tags query.
(struct_item name: (type_identifier) @name) @definition.struct
(enum_item name: (type_identifier) @name) @definition.enum
(union_item name: (type_identifier) @name) @definition.struct
(type_item name: (type_identifier) @name) @definition.type
(trait_item name: (type_identifier) @name) @definition.trait
(const_item name: (identifier) @name) @definition.constant
(static_item name: (identifier) @name) @definition.static
(enum_variant name: (identifier) @name) @definition.enum_member
(field_declaration name: (field_identifier) @name) @definition.field
(function_signature_item name: (identifier) @name) @definition.method
(impl_item type: [(type_identifier) @name (generic_type type: (type_identifier) @name) (scoped_type_identifier name: (type_identifier) @name)]) @definition.impl
(impl_item
  trait: [(type_identifier) @impl.parent (generic_type type: (type_identifier) @impl.parent) (scoped_type_identifier name: (type_identifier) @impl.parent)]
  type: [(type_identifier) @impl.name (generic_type type: (type_identifier) @impl.name) (scoped_type_identifier name: (type_identifier) @impl.name)]) @implementation
; Local bindings (parameters, let, closures, for, generics): a use inside the
; same function resolves to the nearest one before it.
(parameter pattern: (identifier) @local)
(let_declaration pattern: (identifier) @local)
(let_declaration pattern: (tuple_pattern (identifier) @local))
(closure_parameters (identifier) @local)
(for_expression pattern: (identifier) @local)
(type_parameter name: (type_identifier) @local)
