; scry's own definitions for Python.
(class_definition body: (block (function_definition name: (identifier) @name) @definition.method))
(class_definition body: (block (decorated_definition definition: (function_definition name: (identifier) @name) @definition.method)))
(class_definition
  name: (identifier) @impl.name
  superclasses: (argument_list [(identifier) @impl.parent (attribute attribute: (identifier) @impl.parent)])) @implementation
