"""Demo metrics: the dozen definitions of docs/architecture.md, 'Demo data', legacy vs rebuilt, tens
of thousands of values.

Values are drawn from seeded distributions so the story is stable: some metrics clearly better on
rebuilt, some worse, some indistinguishable. Observations go through the real ingest service.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from datetime import timedelta
from operator import itemgetter
from typing import Any

from django.contrib.auth.models import User
from django.core.management.base import OutputWrapper
from django.db import transaction
from django.utils import timezone

from metrics import services
from metrics.ingest import observations_ingest_rows
from metrics.models import MetricDefinition, Observation, PullSource, System, Workload
from metrics.partitions import observations_partitions_create
from metrics.services.pull_sources import pull_source_create

SYSTEMS = [
    ("legacy", "Legacy stack", "The current production training and serving stack."),
    ("rebuilt", "Rebuilt stack", "The new hardware, framework, data pipeline and serving stack."),
]
WORKLOADS = [
    ("llm-pretrain-70b", "LLM pretraining 70B", "large", "core", "training-platform"),
    ("llm-finetune-8b", "LLM fine-tuning 8B", "medium", "peripheral", "training-platform"),
    ("recsys-ranking", "Recommendation ranking", "medium", "peripheral", "data-platform"),
    ("vision-small", "Vision classifier (small)", "small", "peripheral", "training-platform"),
    ("chat-serving", "Chat inference serving", "large", "core", "inference-platform"),
]
TRAINING = ["llm-pretrain-70b", "llm-finetune-8b", "recsys-ranking", "vision-small"]
SERVING = ["chat-serving"]

# The OpenTelemetry names OTLP pushes use where they differ from the key (README "OTLP metrics").
OTEL_NAMES = {"step-time": "train.step.duration"}

# key, name, unit, direction, statistic, sampling, start, end, includes, excludes, team,
# workloads, (legacy mean, rebuilt mean, relative sd)
DEFINITIONS = [
    (
        "training-throughput",
        "Training throughput",
        "token/s",
        "higher_is_better",
        "mean",
        "per_interval",
        "the first optimizer step after warmup begins",
        "the measurement interval of 60 s ends",
        ["data_loading", "communication"],
        ["warmup", "checkpointing", "evaluation"],
        "training-platform",
        TRAINING,
        (41_000, 53_500, 0.06),
    ),
    (
        "step-time",
        "Training step time",
        "ms",
        "lower_is_better",
        "p50",
        "per_step",
        "the optimizer step is launched",
        "the optimizer step has completed on all ranks",
        ["communication"],
        ["data_loading", "checkpointing"],
        "training-platform",
        TRAINING,
        (820, 640, 0.08),
    ),
    (
        "mfu",
        "Model FLOPs utilisation",
        "percent",
        "higher_is_better",
        "mean",
        "per_interval",
        "the measurement interval starts",
        "the measurement interval ends",
        ["communication"],
        ["warmup", "evaluation"],
        "training-platform",
        TRAINING,
        (38.0, 46.5, 0.05),
    ),
    (
        "checkpoint-save-time",
        "Checkpoint save time",
        "s",
        "lower_is_better",
        "p95",
        "per_run",
        "the trainer calls save",
        "every shard is durable in object storage",
        ["network"],
        [],
        "data-platform",
        TRAINING,
        (95, 104, 0.15),
    ),
    (
        "job-interruption-rate",
        "Job interruption rate",
        "1/hour",
        "lower_is_better",
        "mean",
        "per_run",
        "the job is scheduled",
        "the job finishes or is preempted",
        [],
        [],
        "infra-hardware",
        TRAINING,
        (0.021, 0.0205, 0.30),
    ),
    (
        "inference-latency-e2e",
        "Inference p99 latency (with queueing)",
        "ms",
        "lower_is_better",
        "p99",
        "per_request",
        "the request arrives at the gateway",
        "the last token is sent to the client",
        ["queueing", "network", "preprocessing"],
        ["warmup"],
        "inference-platform",
        SERVING,
        (480, 455, 0.25),
    ),
    (
        "inference-latency-compute",
        "Inference p99 latency (compute only)",
        "ms",
        "lower_is_better",
        "p99",
        "per_request",
        "the batch is scheduled on the accelerator",
        "the last token is decoded",
        [],
        ["queueing", "network", "preprocessing", "warmup"],
        "inference-platform",
        SERVING,
        (210, 168, 0.20),
    ),
    (
        "gpu-utilisation",
        "GPU utilisation",
        "percent",
        "higher_is_better",
        "mean",
        "per_interval",
        "the sampling interval of 10 s starts",
        "the sampling interval ends",
        ["data_loading", "communication"],
        [],
        "infra-hardware",
        TRAINING,
        (71, 72, 0.10),
    ),
    (
        "data-loader-wait-share",
        "Data-loader wait share",
        "percent",
        "lower_is_better",
        "mean",
        "per_step",
        "the step requests its next batch",
        "the batch is on the device",
        ["data_loading", "preprocessing"],
        [],
        "data-platform",
        TRAINING,
        (7.5, 9.8, 0.20),
    ),
    (
        "cost-per-million-tokens",
        "Cost per million tokens",
        "USD",
        "lower_is_better",
        "mean",
        "per_run",
        "the run is billed from its first allocated GPU hour",
        "the run releases its last GPU",
        ["warmup", "checkpointing", "evaluation"],
        [],
        "infra-hardware",
        TRAINING,
        (3.10, 2.55, 0.07),
    ),
    (
        "scaling-efficiency",
        "Scaling efficiency (1k → 8k GPUs)",
        "dimensionless",
        "higher_is_better",
        "mean",
        "per_run",
        "the scaled run's first post-warmup step",
        "the scaled run's last measured step",
        ["communication"],
        ["warmup"],
        "training-platform",
        ["llm-pretrain-70b"],
        (0.84, 0.93, 0.03),
    ),
    (
        "gpu-hours-per-run",
        "GPU hours per fine-tuning run",
        "GPU_hour",
        "lower_is_better",
        "mean",
        "per_run",
        "the first GPU is allocated",
        "the last GPU is released",
        ["queueing", "warmup", "checkpointing"],
        [],
        "training-platform",
        ["llm-finetune-8b"],
        (410, 395, 0.12),
    ),
]
SAMPLES_PER_SERIES = 320
SHADOW_SAMPLES = 160  # per system, over the last SHADOW_DAYS, for the draft step-time@3
SHADOW_DAYS = 7
DAYS = 60


def _ensure_reference_data(metric_owner: User) -> None:
    for key, name, description in SYSTEMS:
        System.objects.get_or_create(key=key, defaults={"name": name, "description": description})
    for key, name, size, criticality, team in WORKLOADS:
        Workload.objects.get_or_create(
            key=key, defaults={"name": name, "size": size, "criticality": criticality, "owner_team": team}
        )
    for spec in DEFINITIONS:
        key, name, unit, direction, statistic, sampling, start, end, includes, excludes, team = spec[:11]
        if MetricDefinition.objects.filter(key=key).exists():
            continue
        definition = services.definition_register(
            actor=metric_owner,
            data={
                "key": key,
                "name": name,
                "unit": unit,
                "direction": direction,
                "statistic": statistic,
                "sampling": sampling,
                "start_event": start,
                "end_event": end,
                "includes": includes,
                "excludes": excludes,
                "owner_team": team,
                "description": f"{name} of one workload, as the platform teams agreed to measure it.",
                # Nothing here is ever negative, and a share never exceeds 100 %.
                "min_value": 0.0,
                "max_value": 100.0 if unit == "percent" else None,
                "otel_name": OTEL_NAMES.get(key, ""),
            },
        )
        services.definition_activate(actor=metric_owner, definition=definition)
    _ensure_version_history(metric_owner)
    _ensure_shadow_version(metric_owner)
    _ensure_pull_source(metric_owner)


def _ensure_version_history(metric_owner: User) -> None:
    """step-time got a v2 that stopped counting data loading; v1 stays as history (deprecated)."""
    if MetricDefinition.objects.filter(key="step-time", version=2).exists():
        return
    v2 = services.definition_version_create(
        actor=metric_owner, key="step-time", changes={"excludes": ["data_loading", "checkpointing", "warmup"]}
    )
    services.definition_activate(actor=metric_owner, definition=v2)


def _ensure_shadow_version(metric_owner: User) -> None:
    """step-time@3, a draft that also stops the clock for compilation, collecting shadow data beside
    v2 (rows sent as 'step-time@3') before anyone activates it: the metric page's version switcher."""
    if MetricDefinition.objects.filter(key="step-time", version=3).exists():
        return
    services.definition_version_create(
        actor=metric_owner,
        key="step-time",
        changes={"excludes": ["data_loading", "checkpointing", "warmup", "compilation"]},
    )


def _ensure_pull_source(metric_owner: User) -> None:
    """A Prometheus pull source for step-time on `rebuilt`, disabled: no Prometheus runs in the demo.
    Point it at yours (PATCH base_url, enabled) and beat pulls it every PROMETHEUS_PULL_SECONDS."""
    if PullSource.objects.exists():
        return
    pull_source_create(
        actor=metric_owner,
        data={
            "definition": MetricDefinition.objects.get(
                key="step-time", status=MetricDefinition.Status.ACTIVE
            ),
            "system": System.objects.get(key="rebuilt"),
            "base_url": "http://127.0.0.1:9090",
            # The raw gauge, one series per job: each point is one step's time, as step-time is sampled
            # (per_step). avg() or rate() would make each point an aggregate, refused for this metric.
            "query": 'train_step_seconds{{workload="{workload}", system="{system}"}}',
            "unit": "s",
            "step_seconds": 60,
            "point_kind": "sample",
            "workloads": ["llm-finetune-8b"],
            "enabled": False,
        },
    )


def _shadow_rows(rng: random.Random) -> list[dict[str, Any]]:
    """The last week of llm-finetune-8b step times, measured the step-time@3 way (a little lower)."""
    now = timezone.now().replace(microsecond=0)
    rows = []
    for system, mean in (("legacy", 790), ("rebuilt", 615)):
        for i in range(SHADOW_SAMPLES):
            at = (
                now
                - timedelta(days=SHADOW_DAYS)
                + timedelta(seconds=int(i * SHADOW_DAYS * 86400 / SHADOW_SAMPLES))
            )
            rows.append(
                {
                    "metric": "step-time@3",
                    "system": system,
                    "workload": "llm-finetune-8b",
                    "value": round(rng.lognormvariate(0, 0.08) * mean, 6),
                    "unit": "ms",
                    "observed_at": at.isoformat(),
                    "run_id": f"shadow-{system}-{i // 20:03d}",
                    "source": "demo",
                }
            )
    return rows


def _observation_rows(rng: random.Random) -> list[dict[str, Any]]:
    now = timezone.now().replace(microsecond=0)
    start = now - timedelta(days=DAYS)
    rows = []
    for spec in DEFINITIONS:
        key, unit, workloads, (legacy, rebuilt, sd) = spec[0], spec[2], spec[11], spec[12]
        for workload_index, workload in enumerate(workloads):
            scale = 1 + 0.15 * workload_index  # each workload has its own level
            for system, mean in (("legacy", legacy), ("rebuilt", rebuilt)):
                for i in range(SAMPLES_PER_SERIES):
                    at = start + timedelta(
                        seconds=int(i * DAYS * 86400 / SAMPLES_PER_SERIES) + workload_index
                    )
                    value = rng.lognormvariate(0, sd) * mean * scale
                    if key.startswith("inference-latency") and rng.random() < 0.02:
                        value *= rng.uniform(2, 4)  # tail spikes
                    if unit == "percent":
                        value = min(value, 100.0)
                    if unit == "dimensionless":
                        value = min(value, 1.0)
                    rows.append(
                        {
                            "metric": key,
                            "system": system,
                            "workload": workload,
                            "value": round(value, 6),
                            "unit": "s" if unit == "ms" and i % 10 == 0 else unit,
                            "observed_at": at.isoformat(),
                            "run_id": f"{system}-{workload}-{i // 20:03d}",
                            "source": "demo",
                        }
                    )
                    if rows[-1]["unit"] == "s" and unit == "ms":
                        rows[-1]["value"] = round(value / 1000, 9)  # some scripts report seconds
    return rows


def demo_load(*, users: Mapping[str, User], stdout: OutputWrapper) -> None:
    with transaction.atomic():
        _ensure_reference_data(users["metrics"])
    if Observation.objects.filter(source="demo").exists():
        return
    # History is loaded as an operator backfills it: its months get their partitions first
    # (`observations_partitions_create --since`), so its rows do not wait in the DEFAULT partition.
    observations_partitions_create(since=timezone.now() - timedelta(days=DAYS))
    rng = random.Random(20261129)
    rows = _observation_rows(rng) + _shadow_rows(rng)
    # In the order live ingest would have written them over the two months, not series by series:
    # the table's physical order then follows time, as in a real deployment, so time-window reads
    # touch the pages a live table's would.
    rows.sort(key=itemgetter("observed_at"))
    for start in range(0, len(rows), 10_000):
        observations_ingest_rows(rows=rows[start : start + 10_000], actor=users["ingest"], source="demo")
    stdout.write(f"Loaded {len(rows):,} demo observations for {len(DEFINITIONS)} metric definitions.")
