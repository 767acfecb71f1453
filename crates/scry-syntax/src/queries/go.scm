; scry's own definitions for Go.
(type_spec name: (type_identifier) @name type: (struct_type)) @definition.struct
(type_spec name: (type_identifier) @name type: (interface_type)) @definition.interface
(method_declaration
  receiver: (parameter_list (parameter_declaration type: [(type_identifier) @container (pointer_type (type_identifier) @container) (generic_type type: (type_identifier) @container) (pointer_type (generic_type type: (type_identifier) @container))]))
  name: (field_identifier) @name) @definition.method
(source_file (const_declaration (const_spec name: (identifier) @name) @definition.constant))
(source_file (var_declaration (var_spec name: (identifier) @name) @definition.variable))
(field_declaration name: (field_identifier) @name) @definition.field
(method_elem name: (field_identifier) @name) @definition.method
; Local bindings.
(parameter_declaration name: (identifier) @local)
(short_var_declaration left: (expression_list (identifier) @local))
(var_spec name: (identifier) @local)
(range_clause left: (expression_list (identifier) @local))
