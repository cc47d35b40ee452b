// Placeholder so the module links; replaced by the module's sources.
