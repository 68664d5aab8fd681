"""Transfer methods: they produce a kernel (Meta-KeL, tuned prior) or a model (Envelope, baselines)."""
