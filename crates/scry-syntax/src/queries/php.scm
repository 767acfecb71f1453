; scry's own definitions for PHP.
(method_declaration name: (name) @name) @definition.method
(trait_declaration name: (name) @name) @definition.trait
(enum_declaration name: (name) @name) @definition.enum
(const_element (name) @name) @definition.constant
(property_element (variable_name (name) @name)) @definition.property
(class_declaration name: (name) @impl.name (base_clause [(name) @impl.parent (qualified_name (name) @impl.parent)])) @implementation
(class_declaration name: (name) @impl.name (class_interface_clause [(name) @impl.parent (qualified_name (name) @impl.parent)])) @implementation
