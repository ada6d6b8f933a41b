"""What converting needs, apart from what runs: the graphs each runtime is given (OpenVINO's IRs,
ONNX Runtime's models), built from a checkpoint with torch, onnx, onnxscript and NNCF (the convert
extra: `pip install 'hearth-tts[convert]'`).

The runtime (`hearth.backends`, the engine, the servers) never imports this package: it looks a
conversion up (in a `hearth export` directory or the cache) and calls in here only when one is
missing and these tools are installed (`backends.conversions.require_converter`). `hearth.model`
holds the torch networks they convert (also the reference backend's).
"""
