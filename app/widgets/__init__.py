"""The widgets of the main window: thin Qt views over plain data."""
