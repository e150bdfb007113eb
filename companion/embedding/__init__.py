"""The embedding wing: the offline model (built into ONNX from registry weights), other providers, token counts."""
