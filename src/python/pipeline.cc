// The executor as Python sees it: built from the graph the Python layer recorded.
#include <unistd.h>

#include <chrono>
#include <thread>

#include "pipeline/executor.h"
#include "pipeline/graph.h"
#include "python/common.h"

namespace stoker::python {
namespace {

NodeRef parse_ref(const py::handle& h) {
  auto t = h.cast<std::pair<int, int>>();
  return NodeRef{t.first, t.second};
}

// The record of one operator from the dict the Python layer made (make_graph checks it).
OpRecord make_record(const py::dict& d) {
  OpRecord r;
  r.schema = d["schema"].cast<std::string>();
  r.device = d["device"].cast<std::string>();
  r.name = d.contains("name") && !d["name"].is_none() ? d["name"].cast<std::string>() : "";
  r.location = d.contains("location") ? d["location"].cast<std::string>() : "";
  const std::string who = "fn." + r.schema + (r.location.empty() ? "" : " (" + r.location + ")");
  for (auto item : d["args"].cast<py::dict>()) {
    std::string name = item.first.cast<std::string>();
    r.args[name] = to_arg_value(item.second, who + ": argument '" + name + "'");
  }
  for (auto item : d["tensor_args"].cast<py::dict>())
    r.tensor_args.emplace_back(item.first.cast<std::string>(), parse_ref(item.second));
  for (py::handle h : d["inputs"].cast<py::list>()) r.inputs.push_back(parse_ref(h));
  r.num_outputs = d["num_outputs"].cast<int>();
  return r;
}

py::dict meta_dict(const ReaderMeta& m) {
  py::dict d;
  d["epoch_size"] = m.epoch_size;
  d["epoch_size_padded"] = m.epoch_size_padded;
  d["number_of_shards"] = m.number_of_shards;
  d["shard_id"] = m.shard_id;
  d["pad_last_batch"] = m.pad_last_batch;
  d["stick_to_shard"] = m.stick_to_shard;
  return d;
}

py::dict checkpoint_dict(const Checkpoint& c) {
  py::dict d;
  d["batch_size"] = c.batch_size;
  d["seed"] = c.seed;
  d["iteration"] = c.iteration;
  py::list ops;
  for (const Checkpoint::Op& op : c.ops) {
    py::dict o;
    o["instance"] = op.instance;
    o["op"] = op.schema;
    o["name"] = op.name;
    o["seed"] = op.seed;
    o["state"] = op.state ? py::object(py::str(*op.state)) : py::object(py::none());
    ops.append(o);
  }
  d["operators"] = ops;
  return d;
}

// The Python layer checked the envelope (format, version); a field of the wrong type here is a
// damaged checkpoint.
Checkpoint checkpoint_from(const py::dict& d) {
  try {
    Checkpoint c;
    c.batch_size = d["batch_size"].cast<int>();
    c.seed = d["seed"].cast<uint64_t>();
    c.iteration = d["iteration"].cast<int64_t>();
    for (py::handle h : d["operators"].cast<py::list>()) {
      py::dict o = h.cast<py::dict>();
      Checkpoint::Op op;
      op.instance = o["instance"].cast<int64_t>();
      op.schema = o["op"].cast<std::string>();
      op.name = o["name"].cast<std::string>();
      op.seed = o["seed"].cast<uint64_t>();
      if (!o["state"].is_none()) op.state = o["state"].cast<std::string>();
      c.ops.push_back(std::move(op));
    }
    return c;
  } catch (const py::cast_error& e) {
    throw py::value_error(std::string("Pipeline(checkpoint=...): the checkpoint is damaged (a "
                                      "field has the wrong type: ") + e.what() +
                          "); pass the string Pipeline.checkpoint() returned, unchanged");
  } catch (const py::error_already_set& e) {
    if (!e.matches(PyExc_KeyError)) throw;
    throw py::value_error(std::string("Pipeline(checkpoint=...): the checkpoint is damaged (a "
                                      "field is missing: ") + e.what() +
                          "); pass the string Pipeline.checkpoint() returned, unchanged");
  }
}

py::dict stats_dict(const MemoryStats& s) {
  py::dict d;
  d["allocated"] = s.allocated;
  d["reserved"] = s.reserved;
  d["peak_allocated"] = s.peak_allocated;
  d["peak_reserved"] = s.peak_reserved;
  d["num_allocations"] = s.num_allocations;
  d["num_upstream_allocations"] = s.num_upstream_allocations;
  d["cap"] = s.cap;
  if (s.resource_held) d["resource_held"] = s.resource_held;
  return d;
}

// The executor's threads may wait for the GIL (fn.external_source calls Python on the producer
// thread), so the executor is destroyed, and its threads joined, with the GIL released.
// In a process forked from the one that made it (fn.external_source's parallel workers) the
// executor's threads do not exist: joining them would hang, so the copy is left alone. On its
// own producer thread (Python code run there dropped the last reference) the executor cannot
// join that thread: a helper thread destroys it once the producer has returned. Nor when a
// stage thread is stuck in the user's code (an external source that never returns; Ctrl-C
// left it there): after kStopWait the helper thread takes over, so that `del pipe`, close() and
// the interpreter's exit return; it frees the executor if that code ever returns.
struct ExecutorDeleter {
  static constexpr std::chrono::milliseconds kStopWait{2000};
  pid_t owner = getpid();
  void operator()(Executor* e) const {
    if (getpid() != owner) return;
    if (e->on_producer_thread()) {
      std::thread([e] { delete e; }).detach();
      return;
    }
    auto destroy = [e] {
      if (e->stop(kStopWait)) delete e;
      else std::thread([e] { delete e; }).detach();
    };
    if (PyGILState_Check()) {
      py::gil_scoped_release nogil;
      destroy();
    } else {
      destroy();
    }
  }
};
using ExecutorHolder = std::unique_ptr<Executor, ExecutorDeleter>;

}  // namespace

void bind_pipeline(py::module_& m) {
  py::class_<Executor, ExecutorHolder>(m, "Executor")
      .def(py::init([](py::list ops, py::list outputs, int batch_size, int num_threads,
                       int device_id, int64_t seed, int prefetch_queue_depth, bool exec_async,
                       bool exec_pipelined, bool enable_checkpointing,
                       std::vector<int> cpu_affinity) {
             ExecutorParams p;
             p.batch_size = batch_size;
             p.num_threads = num_threads;
             p.device_id = device_id;
             p.seed = static_cast<uint64_t>(seed);
             p.prefetch_queue_depth = prefetch_queue_depth;
             p.exec_async = exec_async;
             p.exec_pipelined = exec_pipelined;
             p.enable_checkpointing = enable_checkpointing;
             p.cpu_affinity = std::move(cpu_affinity);
             std::vector<OpRecord> records;
             for (py::handle h : ops) records.push_back(make_record(h.cast<py::dict>()));
             std::vector<GraphOp> graph = make_graph(records, p.seed);
             std::vector<NodeRef> outs;
             for (py::handle h : outputs) outs.push_back(parse_ref(h));
             py::gil_scoped_release nogil;
             return ExecutorHolder(new Executor(p, std::move(graph), std::move(outs)));
           }),
           py::arg("ops"), py::arg("outputs"), py::arg("batch_size"), py::arg("num_threads"),
           py::arg("device_id"), py::arg("seed"), py::arg("prefetch_queue_depth"),
           py::arg("exec_async"), py::arg("exec_pipelined"),
           py::arg("enable_checkpointing") = false,
           py::arg("cpu_affinity") = std::vector<int>{})
      .def("run", [](Executor& e, std::optional<double> timeout) -> py::object {
        // Wait in short slices so that Ctrl-C reaches Python within a fraction of a second.
        using clock = std::chrono::steady_clock;
        const auto deadline = clock::now() + std::chrono::duration_cast<clock::duration>(
                                                 std::chrono::duration<double>(timeout.value_or(0)));
        std::optional<std::vector<Batch>> r;
        for (;;) {
          {
            py::gil_scoped_release nogil;
            r = e.try_next(std::chrono::milliseconds(100));
          }
          if (r) break;
          if (PyErr_CheckSignals() != 0) throw py::error_already_set();
          if (timeout && clock::now() >= deadline) return py::none();
        }
        py::tuple t(r->size());
        for (size_t i = 0; i < r->size(); ++i) t[i] = wrap_batch(std::move((*r)[i]));
        return t;
      }, py::arg("timeout") = py::none(),
         "The next batch of every output; with `timeout` (seconds), None when none came by "
         "then.")
      .def("reader_meta", [](const Executor& e, const std::string& name) -> py::object {
        auto m = e.reader_meta(name);
        if (!m) return py::none();
        return meta_dict(*m);
      })
      .def("reader_names", &Executor::reader_names)
      .def("readers", [](const Executor& e) {
        py::list r;
        for (const auto& [name, m] : e.readers()) r.append(py::make_tuple(name, meta_dict(m)));
        return r;
      }, "Every reader, named or not, as (display name, reader_meta dict).")
      .def("error_stats", [](const Executor& e) {
        py::dict d;
        for (const auto& [op, st] : e.error_stats()) {
          py::dict x;
          x["skipped"] = st.skipped;
          x["replaced"] = st.replaced;
          x["samples"] = st.sources;
          d[py::str(op)] = x;
        }
        return d;
      })
      .def("memory_stats", [](Executor& e) {
        py::dict d;
        d["host"] = stats_dict(e.host_memory_stats());
        if (GpuContext* g = e.gpu()) {
          d["device"] = stats_dict(g->device_stats());
          d["pinned"] = stats_dict(g->pinned_stats());
        }
        return d;
      })
      .def("release_unused", [](Executor& e) {
        size_t n = e.host_pool().release_unused();
        if (GpuContext* g = e.gpu()) n += g->release_unused();
        return n;
      })
      .def("profile", [](const Executor& e) {
        Profile p = e.profile();
        py::list ops, stages;
        for (const Profile::Op& o : p.ops) {
          py::dict d;
          d["operator"] = o.name;
          d["device"] = o.backend;
          d["stage"] = o.stage;
          d["iterations"] = o.iterations;
          d["batch_ms"] = o.batch_ms;
          d["sample_ms"] = o.sample_ms;
          if (o.prepare_stage >= 0) {
            d["prepare_ms"] = o.prepare_ms;
            d["prepare_stage"] = o.prepare_stage;
          }
          if (!o.counters.empty()) {
            py::dict c;
            for (const auto& [name, value] : o.counters) c[py::str(name)] = value;
            d["counters"] = c;
          }
          ops.append(d);
        }
        for (const Profile::Stage& s : p.stages) {
          py::dict d;
          d["stage"] = s.name;
          d["iterations"] = s.iterations;
          d["busy_ms"] = s.busy_ms;
          stages.append(d);
        }
        py::dict d;
        d["operators"] = ops;
        d["stages"] = stages;
        d["pipelined"] = p.pipelined;
        d["batches"] = p.delivered;
        d["wait_ms"] = p.wait_ms;
        d["elapsed_ms"] = p.elapsed_ms;
        return d;
      })
      .def("set_host_memory_cap", [](Executor& e, size_t bytes) { e.host_pool().set_cap(bytes); })
      .def("iterations_produced", &Executor::iterations_produced)
      .def("checkpoint", [](const Executor& e) { return checkpoint_dict(e.checkpoint()); },
           "The state after the last batch run() returned, as a dict (Pipeline.checkpoint() "
           "wraps it in a versioned JSON string).")
      .def("restore", [](Executor& e, const py::dict& d) {
        Checkpoint c = checkpoint_from(d);
        py::gil_scoped_release nogil;
        e.restore(c);
      }, py::arg("checkpoint"), "Continues from a checkpoint() dict; before the first run().");
}

}  // namespace stoker::python
