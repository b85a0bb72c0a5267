// fn.external_source: batches from the user's Python code, as a CPU batch operator of the graph.
//
// The Python side (python/stoker/external_source.py) knows the kinds of sources (callables,
// iterables, generator functions, feed_input), cycling, SampleInfo/BatchInfo and epochs; it
// gives this operator one `fetch(iteration, batch_size)` callable. The operator runs on the
// executor's producer thread and takes the GIL only to call it and to copy the arrays it
// returns. fetch() returns a tuple with one batch per output (an array whose first axis is the
// batch, or a list of arrays), or None when there is no data *yet* (feed_input has not been
// called for this iteration): the operator then waits, without the GIL, until the Python side
// notifies it (data fed, run() asked for the iteration, the pipeline closed). Anything fetch()
// raises (StopIteration included) fails the iteration; the Python pipeline re-raises the
// source's own exception from run().
//
// Pipeline.feed_input's batches take a shorter way: they are copied into batches on the feeding
// thread (which holds the GIL anyway) and queued in the ExternalSourceState, and the operator
// takes them without the GIL. Handing the GIL from the caller to the producer thread and back
// cost a one-image inference from Python 0.1-0.2 ms (bench/RESULTS.md, issue 24).
//
// The operator and the Python side share an ExternalSourceState, found through a registry by
// the `_source_id` argument (an OpSpec holds only constants).
#include <pybind11/numpy.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <deque>
#include <mutex>
#include <optional>

#include "core/error.h"
#include "core/memory.h"
#include "pipeline/executor.h"
#include "pipeline/operator.h"
#include "python/common.h"
#include "python/state_registry.h"

namespace stoker::python {
namespace {

// One batch per output from what the Python side checked: a tuple of num_outputs batches, each
// a C-contiguous ndarray (first axis: samples) or a list of C-contiguous ndarrays of one dtype
// and number of dimensions. Copied into `pool`, or with no_copy sharing the arrays. Called with
// the GIL.
std::vector<Batch> to_batches(const py::tuple& outs, const std::vector<std::string>& layouts,
                              bool no_copy, MemoryPool& pool);

class ExternalSourceState {
 public:
  explicit ExternalSourceState(py::object fetch) : fetch_(fetch.release().ptr()) {}
  ~ExternalSourceState() {
    // The last owner may be the executor, destroyed on any thread.
    if (fetch_ && interpreter_alive()) {
      py::gil_scoped_acquire gil;
      Py_DECREF(fetch_);
    }
  }
  ExternalSourceState(const ExternalSourceState&) = delete;
  ExternalSourceState& operator=(const ExternalSourceState&) = delete;

  int64_t id = 0;  // in the registry

  // Callers hold the GIL.
  py::object fetch(int64_t iteration, int batch_size) {
    call_iteration_ = iteration;
    call_start_ns_ = now_ns();
    struct Done {
      std::atomic<int64_t>& start;
      ~Done() { start = 0; }
    } done{call_start_ns_};
    return py::reinterpret_borrow<py::object>(fetch_)(iteration, batch_size);
  }
  // The call into the source in progress: (seconds it has lasted, its iteration), or (0, -1).
  // Pipeline.run() reads it to enforce fn.external_source's timeout.
  std::pair<double, int64_t> busy() const {
    const int64_t start = call_start_ns_;
    if (!start) return {0.0, -1};
    return {static_cast<double>(now_ns() - start) / 1e9, call_iteration_.load()};
  }

  // feed_input's batches, converted by the feeding thread.
  void push_fed(std::vector<Batch> outputs) {
    std::lock_guard<std::mutex> g(mu_);
    fed_.push_back(std::move(outputs));
    ++events_;
    cv_.notify_all();
  }
  // The next fed batch (with repeat_last, the last one again when none is waiting), or none.
  std::optional<std::vector<Batch>> pop_fed() {
    std::lock_guard<std::mutex> g(mu_);
    if (!fed_.empty()) {
      last_fed_ = std::move(fed_.front());
      fed_.pop_front();
      return last_fed_;
    }
    if (repeat_last_ && last_fed_) return last_fed_;
    return std::nullopt;
  }
  bool has_fed() const {
    std::lock_guard<std::mutex> g(mu_);
    return !fed_.empty() || (repeat_last_ && last_fed_);
  }
  void set_repeat_last(bool on) {
    std::lock_guard<std::mutex> g(mu_);
    repeat_last_ = on;
  }
  // Where fed batches are copied to: the pipeline's host pool once it is built (before that, a
  // pool of the source's own).
  void use_pool(std::shared_ptr<MemoryPool> pool) {
    std::lock_guard<std::mutex> g(mu_);
    pool_ = std::move(pool);
  }
  MemoryPool& pool() {
    std::lock_guard<std::mutex> g(mu_);
    if (!pool_) pool_ = std::make_shared<MemoryPool>(host_resource(), "external_source");
    return *pool_;
  }

  // Wakes an operator waiting for data.
  void notify() {
    std::lock_guard<std::mutex> g(mu_);
    ++events_;
    cv_.notify_all();
  }
  void cancel() {
    std::lock_guard<std::mutex> g(mu_);
    cancelled_ = true;
    cv_.notify_all();
  }
  void resume() {
    std::lock_guard<std::mutex> g(mu_);
    cancelled_ = false;
  }
  bool cancelled() const {
    std::lock_guard<std::mutex> g(mu_);
    return cancelled_;
  }
  uint64_t events() const {
    std::lock_guard<std::mutex> g(mu_);
    return events_;
  }
  // Waits (without the GIL) for an event after `seen`, cancellation, or `timeout`.
  void wait(uint64_t seen, std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lk(mu_);
    cv_.wait_for(lk, timeout, [&] { return cancelled_ || events_ != seen; });
  }

 private:
  static int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }

  PyObject* fetch_;
  std::atomic<int64_t> call_start_ns_{0};  // 0: no call in progress
  std::atomic<int64_t> call_iteration_{-1};
  mutable std::mutex mu_;
  std::condition_variable cv_;
  uint64_t events_ = 0;
  bool cancelled_ = false;
  std::deque<std::vector<Batch>> fed_;
  std::optional<std::vector<Batch>> last_fed_;
  bool repeat_last_ = false;
  std::shared_ptr<MemoryPool> pool_;
};

using Registry = StateRegistry<ExternalSourceState>;

ErrorKind kind_of(const py::error_already_set& e) {
  if (e.matches(PyExc_TypeError)) return ErrorKind::kTypeMismatch;
  if (e.matches(PyExc_FileNotFoundError)) return ErrorKind::kNotFound;
  if (e.matches(PyExc_MemoryError)) return ErrorKind::kOutOfMemory;
  if (e.matches(PyExc_NotImplementedError)) return ErrorKind::kUnsupported;
  if (e.matches(PyExc_OSError)) return ErrorKind::kIO;
  return ErrorKind::kInvalidArgument;
}

// Keeps a Python object alive for as long as a sample shares its memory; the reference is
// dropped with the GIL, on whichever thread lets the sample go.
std::shared_ptr<void> share(const py::object& owner, void* data) {
  return std::shared_ptr<void>(hold(owner.ptr()), data);
}

std::vector<Batch> to_batches(const py::tuple& outs, const std::vector<std::string>& layouts,
                              bool no_copy, MemoryPool& pool) {
  std::vector<Batch> result(outs.size());
  for (size_t o = 0; o < outs.size(); ++o) {
    Batch& b = result[o];
    const std::string layout = o < layouts.size() ? layouts[o] : std::string();
    if (py::isinstance<py::array>(outs[o])) {
      py::array a = outs[o].cast<py::array>();
      DType t = dtype_of_array(a);
      STOKER_ASSERT(t != DType::kNone && a.ndim() >= 1, "external_source: unchecked batch");
      const int64_t n = a.shape(0);
      Shape s(a.shape() + 1, a.shape() + a.ndim());
      const size_t bytes = static_cast<size_t>(volume(s)) * dtype_size(t);
      if (no_copy) {
        b = Batch(t, layout);
        std::shared_ptr<void> owner = share(a, const_cast<void*>(a.data()));
        for (int64_t i = 0; i < n; ++i)
          b.push_back({owner, static_cast<uint8_t*>(owner.get()) + i * bytes, s, ""});
      } else {
        b.allocate(pool, t, std::vector<Shape>(n, s), layout);
        if (n) std::memcpy(b[0].data, a.data(), bytes * n);
      }
      continue;
    }
    std::vector<py::array> samples;
    for (py::handle h : outs[o].cast<py::list>()) samples.push_back(h.cast<py::array>());
    STOKER_ASSERT(!samples.empty(), "external_source: empty batch");
    DType t = dtype_of_array(samples[0]);
    std::vector<Shape> shapes;
    for (const py::array& a : samples) shapes.emplace_back(a.shape(), a.shape() + a.ndim());
    if (no_copy) {
      b = Batch(t, layout);
      for (size_t i = 0; i < samples.size(); ++i)  // (share() aliases each array's data)
        b.push_back({share(samples[i], const_cast<void*>(samples[i].data())),
                     const_cast<void*>(samples[i].data()), shapes[i], ""});
    } else {
      b.allocate(pool, t, shapes, layout);
      for (size_t i = 0; i < samples.size(); ++i)
        std::memcpy(b[i].data, samples[i].data(),
                    static_cast<size_t>(volume(shapes[i])) * dtype_size(t));
    }
  }
  return result;
}

class ExternalSource : public Operator {
 public:
  explicit ExternalSource(const OpSpec& spec) : Operator(spec) {
    state_ = Registry::get().find(spec, "_source_id", "external_source");
    if (spec.has("layout")) layouts_ = spec.get<std::vector<std::string>>("layout");
    if (!layouts_.empty() && static_cast<int>(layouts_.size()) != spec.num_outputs)
      spec.arg_error("layout", "has " + std::to_string(layouts_.size()) + " layouts for " +
                                   std::to_string(spec.num_outputs) + " outputs");
    no_copy_ = spec.get<bool>("no_copy");
  }

  bool sample_wise() const override { return false; }

  void run_batch(Workspace& ws) override {
    // An iteration re-run after on_error='skip' replaced samples gets the same data again.
    if (ws.iteration == cached_iteration_) {
      ws.outputs = cached_;
      return;
    }
    for (;;) {
      if (state_->cancelled())
        fail(ErrorKind::kInvalidArgument, spec_.display_name() + ": the pipeline was closed");
      const uint64_t seen = state_->events();
      if (auto fed = state_->pop_fed()) {  // feed_input's, without the GIL
        ws.outputs = std::move(*fed);
        cached_iteration_ = ws.iteration;
        cached_ = ws.outputs;
        return;
      }
      {
        py::gil_scoped_acquire gil;
        py::object r;
        try {
          r = state_->fetch(ws.iteration, ws.batch_size);
        } catch (py::error_already_set& e) {
          throw Error(kind_of(e), spec_.display_name() + ": the source raised " + e.what());
        }
        if (!r.is_none()) {
          convert(r, ws);
          cached_iteration_ = ws.iteration;
          cached_ = ws.outputs;
          return;
        }
      }
      state_->wait(seen, std::chrono::milliseconds(100));
    }
  }

 private:
  // Called with the GIL: `r` as the Python side checked it (to_batches).
  void convert(const py::object& r, Workspace& ws) {
    py::tuple outs = r.cast<py::tuple>();
    STOKER_ASSERT(static_cast<int>(outs.size()) == spec_.num_outputs,
                  "external_source fetch() returned the wrong number of outputs");
    std::vector<std::string> layouts = layouts_;
    if (layouts.empty())
      for (size_t o = 0; o < outs.size(); ++o) layouts.push_back(fed_layout(r, o));
    ws.outputs = to_batches(outs, layouts, no_copy_, *ws.host_pool);
  }

  // feed_input(layout=...) where the external_source declared no layout: the Python side hands
  // the batch as a tuple whose `layouts` attribute names each output's layout.
  static std::string fed_layout(const py::object& r, size_t o) {
    py::object l = py::getattr(r, "layouts", py::none());
    return l.is_none() ? std::string() : py::list(l)[o].cast<std::string>();
  }

  std::shared_ptr<ExternalSourceState> state_;
  std::vector<std::string> layouts_;
  bool no_copy_ = false;
  int64_t cached_iteration_ = -1;
  std::vector<Batch> cached_;
};

}  // namespace

STOKER_REGISTER_OP_NAMED(external_source, "external_source") {
  schema.doc("Data from Python: `source` is a callable, an iterable or a generator function that "
             "returns a batch (a list of NumPy arrays, or one array whose first axis is the "
             "batch), or, with batch=False, one sample per call; or, with no source, the data "
             "given to Pipeline.feed_input(name, data). StopIteration from the source ends the "
             "epoch: Pipeline.run() raises StopIteration, and Pipeline.reset() starts the next "
             "one. Sources are called on the pipeline's producer thread, up to "
             "prefetch_queue_depth batches ahead.")
      .inputs(0, 0).outputs(1)
      .arg({.name = "source", .type = ArgType::kString, .optional = true,
            .doc = "(a Python object) A callable (taking nothing, the iteration number, "
                   "BatchInfo with batch_info=True, or SampleInfo with batch=False), an "
                   "iterable, or a generator function."})
      .arg({.name = "num_outputs", .type = ArgType::kInt, .optional = true,
            .doc = "The number of outputs; the source then returns a tuple of that many batches "
                   "(or samples), and the call returns a list of outputs.", .min = 1})
      .arg({.name = "batch", .type = ArgType::kBool, .default_value = true,
            .doc = "True: the source returns whole batches. False: it returns one sample per "
                   "call (callables get a SampleInfo)."})
      .arg({.name = "batch_info", .type = ArgType::kBool, .default_value = false,
            .doc = "With batch=True: a callable source gets a BatchInfo (iteration, epoch_idx) "
                   "instead of the iteration number."})
      .arg({.name = "cycle", .type = ArgType::kString, .optional = true,
            .doc = "For iterables and generator functions: False/'no' (the default: the end of "
                   "the data ends the epoch, and the source stays exhausted), True/'quiet' (start "
                   "over silently), 'raise' (end the epoch, then start over after "
                   "Pipeline.reset())."})
      .arg({.name = "layout", .type = ArgType::kStringList, .optional = true,
            .doc = "The layout of each output (e.g. 'HWC')."})
      .arg({.name = "dtype", .type = ArgType::kIntList, .optional = true,
            .doc = "The element type each output must have (types.UINT8, ...); data of another "
                   "type raises TypeError."})
      .arg({.name = "ndim", .type = ArgType::kIntList, .optional = true,
            .doc = "The number of dimensions each output's samples must have."})
      .arg({.name = "no_copy", .type = ArgType::kBool, .default_value = false,
            .doc = "Share the source's arrays instead of copying them (they must not change "
                   "while the pipeline holds them; C-contiguous arrays only). Parallel sources "
                   "always copy once, from the workers' shared memory into the pipeline's pool."})
      .arg({.name = "repeat_last", .type = ArgType::kBool, .default_value = false,
            .doc = "With feed_input: when no new data was fed, give the last batch again."})
      .arg({.name = "parallel", .type = ArgType::kBool, .default_value = false,
            .doc = "Call the source in the pipeline's worker processes (py_num_workers, "
                   "py_start_method), which pass the data back through shared memory. The source "
                   "must be a callable taking one argument: a SampleInfo (batch=False, the "
                   "default with parallel=True: a batch's samples are spread over the workers) "
                   "or, with batch=True, a BatchInfo (batch_info=True) or the iteration number. "
                   "With py_start_method='spawn' it must be picklable."})
      .arg({.name = "prefetch_queue_depth", .type = ArgType::kInt, .default_value = int64_t{1},
            .doc = "With parallel=True: how many batches the workers compute ahead of the one "
                   "the pipeline waits for.", .min = 1})
      .arg({.name = "timeout", .type = ArgType::kFloat, .optional = true,
            .doc = "(stoker's own; DALI has none) Seconds a call into the source may take: "
                   "Pipeline.run() raises TimeoutError, naming this external_source and how "
                   "long its call has lasted, when the batch it waits for comes from a call "
                   "running longer. None (the default) waits as long as it takes, as DALI does: "
                   "a first batch that downloads data, or a breakpoint in the source, may "
                   "legitimately take minutes. run() raises again while the call goes on; once "
                   "it returns, the next run() returns its batch."})
      .arg({.name = "blocking", .type = ArgType::kBool, .default_value = true,
            .doc = "Accepted for DALI compatibility: the producer waits for fed data."})
      .arg({.name = "cuda_stream", .type = ArgType::kInt, .optional = true,
            .doc = "Accepted for DALI compatibility (GPU data only)."})
      .arg({.name = "use_copy_kernel", .type = ArgType::kBool, .default_value = false,
            .doc = "Accepted for DALI compatibility (GPU data only)."})
      .arg({.name = "_source_id", .type = ArgType::kInt,
            .doc = "Set by the Python layer: the source this operator calls."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<ExternalSource>(s); });
}

void bind_external_source(py::module_& m) {
  py::class_<ExternalSourceState, std::shared_ptr<ExternalSourceState>>(
      m, "ExternalSourceState", "The link between fn.external_source's Python side and its operator.")
      .def(py::init([](py::object fetch) { return Registry::get().make(fetch); }),
           py::arg("fetch"))
      .def_property_readonly("id", [](const ExternalSourceState& s) { return s.id; },
                             "The value of the operator's _source_id argument.")
      .def("notify", &ExternalSourceState::notify, "Wakes the operator if it waits for data.")
      .def("cancel", &ExternalSourceState::cancel,
           "Makes a waiting operator give up (the pipeline is being closed).")
      .def("resume", &ExternalSourceState::resume, "Undoes cancel() (the pipeline is built again).")
      .def("busy", &ExternalSourceState::busy,
           "(seconds, iteration) of the call into the source in progress, or (0.0, -1).")
      .def("push_fed", [](ExternalSourceState& s, py::tuple outs, std::vector<std::string> layouts,
                          bool no_copy) {
        s.push_fed(to_batches(outs, layouts, no_copy, s.pool()));
      }, py::arg("outs"), py::arg("layouts"), py::arg("no_copy"),
         "Queues a feed_input batch (checked by the Python side), copied now.")
      .def("has_fed", &ExternalSourceState::has_fed,
           "Whether the operator's next call finds a fed batch.")
      .def("set_repeat_last", &ExternalSourceState::set_repeat_last, py::arg("on"))
      .def("use_pool", [](ExternalSourceState& s, Executor& e) {
        s.use_pool(e.host_pool().shared_from_this());
      }, py::arg("executor"), "Copies fed batches into this executor's host pool.");
}

}  // namespace stoker::python
