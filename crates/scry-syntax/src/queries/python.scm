; scry's own definitions for Python.
(class_definition body: (block (function_definition name: (identifier) @name) @definition.method))
(class_definition body: (block (decorated_definition definition: (function_definition name: (identifier) @name) @definition.method)))
(class_definition
  name: (identifier) @impl.name
  superclasses: (argument_list [(identifier) @impl.parent (attribute attribute: (identifier) @impl.parent)])) @implementation
; Attributes set in __init__ are the class's fields.
(function_definition
  name: (identifier) @_init
  body: (block (expression_statement (assignment left: (attribute object: (identifier) @_self attribute: (identifier) @name)) @definition.field))
  (#eq? @_init "__init__")
  (#eq? @_self "self"))
; Local bindings.
(parameters (identifier) @local)
(default_parameter name: (identifier) @local)
(typed_parameter (identifier) @local)
(typed_default_parameter name: (identifier) @local)
(assignment left: (identifier) @local)
(for_statement left: (identifier) @local)
