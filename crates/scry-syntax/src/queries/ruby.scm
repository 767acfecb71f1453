; scry's own definitions for Ruby.
(program (assignment left: (constant) @name) @definition.constant)
(class name: [(constant) @impl.name (scope_resolution name: (constant) @impl.name)] superclass: (superclass [(constant) @impl.parent (scope_resolution name: (constant) @impl.parent)])) @implementation
; Local bindings.
(method_parameters (identifier) @local)
(assignment left: (identifier) @local)
