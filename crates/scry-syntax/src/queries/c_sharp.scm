; scry's own definitions for C#.
(struct_declaration name: (identifier) @name) @definition.struct
(enum_declaration name: (identifier) @name) @definition.enum
(record_declaration name: (identifier) @name) @definition.struct
(property_declaration name: (identifier) @name) @definition.property
(constructor_declaration name: (identifier) @name) @definition.constructor
(enum_member_declaration name: (identifier) @name) @definition.enum_member
(class_declaration name: (identifier) @impl.name (base_list [(identifier) @impl.parent (generic_name (identifier) @impl.parent) (qualified_name name: (identifier) @impl.parent)])) @implementation
(struct_declaration name: (identifier) @impl.name (base_list [(identifier) @impl.parent (generic_name (identifier) @impl.parent)])) @implementation
(interface_declaration name: (identifier) @impl.name (base_list [(identifier) @impl.parent (generic_name (identifier) @impl.parent)])) @implementation
