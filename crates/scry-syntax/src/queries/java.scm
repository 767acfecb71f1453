; scry's own definitions for Java.
(enum_declaration name: (identifier) @name) @definition.enum
(record_declaration name: (identifier) @name) @definition.struct
(annotation_type_declaration name: (identifier) @name) @definition.interface
(constructor_declaration name: (identifier) @name) @definition.constructor
(field_declaration declarator: (variable_declarator name: (identifier) @name)) @definition.field
(constant_declaration declarator: (variable_declarator name: (identifier) @name)) @definition.constant
(enum_constant name: (identifier) @name) @definition.enum_member
(class_declaration name: (identifier) @impl.name superclass: (superclass [(type_identifier) @impl.parent (generic_type (type_identifier) @impl.parent)])) @implementation
(class_declaration name: (identifier) @impl.name interfaces: (super_interfaces (type_list [(type_identifier) @impl.parent (generic_type (type_identifier) @impl.parent)]))) @implementation
(enum_declaration name: (identifier) @impl.name interfaces: (super_interfaces (type_list [(type_identifier) @impl.parent (generic_type (type_identifier) @impl.parent)]))) @implementation
(interface_declaration name: (identifier) @impl.name (extends_interfaces (type_list [(type_identifier) @impl.parent (generic_type (type_identifier) @impl.parent)]))) @implementation
; Local bindings.
(formal_parameter name: (identifier) @local)
(local_variable_declaration declarator: (variable_declarator name: (identifier) @local))
(enhanced_for_statement name: (identifier) @local)
