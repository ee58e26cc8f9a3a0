"""The verdict of a nest as JSON (the `verdict` key of each nest in `analyze --gpu --format json`)."""
from __future__ import annotations


def verdict_json(advice) -> dict | None:
    if advice is None:
        return None
    v = advice.verdict
    cpu = advice.cpu
    out = {
        "verdict": v.verdict if v else "no verdict" if advice.ported else "not portable",
        "reason": v.reason if v else advice.refusal,
        "ported": advice.ported,          # `port` emits the nest (with or without a verdict)
        "needs": list(advice.needs),      # sizes to give (--param) for a verdict
        "cpu": None if cpu is None else {
            "seconds": cpu.median_s, "source": cpu.source, "min_s": cpu.min_s, "max_s": cpu.max_s,
            "executions_per_run": cpu.executions, "runs": cpu.runs, "compiler": list(cpu.compiler),
            "compiler_version": cpu.compiler_version, "flags": list(cpu.flags), "note": cpu.note},
    }
    if v is not None:
        out.update({
            "gpu": v.gpu, "model": v.model, "cpu_seconds": v.cpu_s,
            "at_sizes": [{"values": p.size.env, "executions_per_run": p.size.executions, "cpu_s_per_run": p.cpu_s,
                          "gpu_s_per_run": p.gpu_s} for p in advice.at_sizes],
            "gpu_seconds": {"total": v.total_gpu_s, "kernels": v.kernel_s, "launches": v.launch_s,
                            "transfers": v.transfer_s, "context": v.context_s},
            "speedup": v.speedup, "kernel_speedup": v.kernel_speedup, "bottleneck": v.bottleneck,
            "recommendations": list(v.recommendations),
            "break_even": [{"param": b.param, "target_speedup": b.target, "value": b.value,
                            "searched": list(b.searched), "below": list(b.below) if b.below else None,
                            "at": list(b.at) if b.at else None, "evaluations": b.evaluations,
                            "sentence": b.sentence(v.gpu)} for b in v.break_even],
        })
    return out
