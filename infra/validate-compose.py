"""Structural check of docker-compose.yml without a Docker engine (used in review, not in CI):
parses the YAML (merge keys resolved), and checks the parts README.md promises."""
import sys
import yaml

with open(sys.argv[1] if len(sys.argv) > 1 else "docker-compose.yml") as f:
    doc = yaml.safe_load(f)

services = doc["services"]
expected = {"postgres", "nats", "store", "provider-gateway", "run-worker", "cursor-adapter", "edge-proxy", "prometheus", "grafana"}
assert set(services) == expected, sorted(services)
# Prometheus and Grafana only with --profile observability; nothing else has a profile.
for name, s in services.items():
    assert s.get("profiles") == (["observability"] if name in ("prometheus", "grafana") else None), (name, s.get("profiles"))
    if name in ("prometheus", "grafana"):
        assert all(p.startswith("127.0.0.1:") for p in s["ports"]), (name, s["ports"])
for name in ["store", "provider-gateway", "run-worker", "cursor-adapter", "edge-proxy"]:
    s = services[name]
    assert s["command"] == ["node", f"services/{name}/src/main.ts"], (name, s["command"])
    assert s["build"] == ".", name
    assert s["environment"]["NATS_URL"] == "nats://nats:4222", name
    assert ("DATABASE_URL" in s["environment"]) == (name == "store"), name
    assert ("env_file" in s) == (name == "provider-gateway"), name
    # Ops listener inside the compose network, never published.
    assert s["environment"]["METRICS_HOST"] == "0.0.0.0" and s["environment"]["METRICS_PORT"] == "9464", name
    assert not any("9464" in str(p) for p in s.get("ports", [])), name
assert services["run-worker"]["deploy"]["replicas"] == 3
assert services["edge-proxy"]["ports"] == ["${EDGE_PROXY_PORT:-8080}:8080"]
assert "-js" in services["nats"]["command"]
for name in ["provider-gateway", "cursor-adapter", "edge-proxy"]:
    mounts = [v for v in services[name]["volumes"] if isinstance(v, dict)]
    assert any(m["target"] == "/app/config/gateway.json" and m["read_only"] for m in mounts), name
# Prometheus scrapes every gateway service's ops port (run-worker replicas by DNS).
with open("infra/prometheus/prometheus.yml") as f:
    prom = yaml.safe_load(f)
jobs = {j["job_name"]: j for j in prom["scrape_configs"]}
for name in ["store", "provider-gateway", "cursor-adapter", "edge-proxy"]:
    assert jobs[name]["static_configs"][0]["targets"] == [f"{name}:9464"], name
assert jobs["run-worker"]["dns_sd_configs"][0] == {"names": ["run-worker"], "type": "A", "port": 9464, "refresh_interval": "30s"}
print("docker-compose.yml: ok (%d services)" % len(services))
