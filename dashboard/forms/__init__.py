"""The dashboard's forms, one module per page family: servers, parts and tools, keys,
organizations; structured.py is the JSON/YAML textarea field they share."""
