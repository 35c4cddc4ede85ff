"""Built-in plugins: shipped with the kernel, registered through the same hooks as any plugin."""
