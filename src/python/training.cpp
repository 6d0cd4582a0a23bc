// Python bindings: precision policies, optimizers (SGD, Adam, AdamW, Lion), datasets, training
// runs and the floor of Theorem 1 of Zamirai et al., "Revisiting BFloat16 Training" (2020).
#include <cmath>
#include <string>
#include <vector>

#include "analysis/training/datasets.hpp"
#include "analysis/training/optimizer.hpp"
#include "analysis/training/gemm_recipe.hpp"
#include "analysis/training/train.hpp"
#include "bindings.hpp"

namespace fpemu::python {
namespace {

using namespace fpemu::training;

// Hyper-parameters from keyword arguments; beta2 = None takes the optimizer's default (Lion 0.99).
hyperparameters hyper_from(optimizer_kind k, double lr, double momentum, double dampening, bool nesterov,
                           double weight_decay, double beta1, const std::optional<double>& beta2, double eps) {
  hyperparameters h;
  h.lr = lr;
  h.momentum = momentum;
  h.dampening = dampening;
  h.nesterov = nesterov;
  h.weight_decay = weight_decay;
  h.beta1 = beta1;
  h.beta2 = beta2 ? *beta2 : (k == optimizer_kind::lion ? 0.99 : 0.999);
  h.eps = eps;
  raise_if(check(k, h));
  // The library checks only what k uses; the rest must lie in range too, so that momentum=nan
  // given to adam is refused rather than dropped silently.
  for (const optimizer_kind other : {optimizer_kind::sgd, optimizer_kind::adam})
    if (const auto bad = check(other, h)) throw py::value_error(*bad + " (" + std::string(to_string(k)) + " does not use it)");
  return h;
}

constexpr const char* hyper_doc =
    "Hyper-parameters as in torch.optim: lr, momentum, dampening, nesterov (sgd), weight_decay (L2 for\n"
    "sgd and adam, decoupled for adamw and lion), beta1, beta2 (default 0.999, lion 0.99), eps.\n"
    "Policies: fp32 | mixed | mixed-fp16 | FMT[-kahan|-zamirai|-sr[K]][-ops], e.g. bf16, bf16-kahan,\n"
    "bf16-sr, bf16-sr8-ops (FMT a format whose values are binary32 values: bf16, fp16, tf32, ...).";

#define FPEMU_HYPER_ARGS                                                                                         \
  py::arg("lr") = 1e-3, py::arg("momentum") = 0.0, py::arg("dampening") = 0.0, py::arg("nesterov") = false,    \
      py::arg("weight_decay") = 0.0, py::arg("beta1") = 0.9, py::arg("beta2") = py::none(), py::arg("eps") = 1e-8

py::array weights_array(const stored_tensor& t, const std::vector<py::ssize_t>& shape) {
  return reshaped(floats_array(t.values()), shape).cast<py::array>();
}

// An optimizer over numpy tensors: the shapes of the initial parameters are kept for the results.
class py_optimizer {
 public:
  py_optimizer(optimizer_kind k, const std::vector<py::array>& params, const std::string& policy,
               const hyperparameters& h, std::uint64_t seed)
      : opt_(make(k, params, policy, h, seed)) {
    for (const py::array& p : params) shapes_.push_back(shape_of(p));
  }

  void step(const std::vector<py::array>& grads) {
    if (grads.size() != shapes_.size())
      throw py::value_error("step got " + std::to_string(grads.size()) + " gradients for " +
                            std::to_string(shapes_.size()) + " parameter tensors");
    std::vector<stored_tensor> g;
    for (std::size_t i = 0; i < grads.size(); ++i) {
      if (shape_of(grads[i]) != shapes_[i])
        throw py::value_error("grads[" + std::to_string(i) + "] has shape " + std::string(py::str(py::cast(shape_of(grads[i])))) +
                              " but the parameter has shape " + std::string(py::str(py::cast(shapes_[i]))));
      const std::vector<float> v = to_floats(grads[i], "grads[" + std::to_string(i) + "]");
      g.emplace_back(opt_.policy().grads, v.size());
      g.back().store(0, v);
    }
    without_gil([&] { opt_.step(g); });
  }

  py::array weights(std::size_t i) const { return weights_array(opt_.weights(check(i)), shapes_[i]); }
  py::array updated_weights(std::size_t i) const { return weights_array(opt_.updated_weights(check(i)), shapes_[i]); }
  py::object state(std::size_t i, int k) const {
    const stored_tensor* s = opt_.state(check(i), k);
    return s ? py::object(weights_array(*s, shapes_[i])) : py::none();
  }
  py::object compensation(std::size_t i) const {
    const stored_tensor* c = opt_.compensation(check(i));
    return c ? py::object(weights_array(*c, shapes_[i])) : py::none();
  }
  const optimizer& get() const { return opt_; }
  optimizer& get() { return opt_; }

 private:
  static optimizer make(optimizer_kind k, const std::vector<py::array>& params, const std::string& policy,
                        const hyperparameters& h, std::uint64_t seed) {
    if (params.empty()) throw py::value_error("params is empty: give at least one tensor");
    std::vector<std::vector<float>> initial;
    for (std::size_t i = 0; i < params.size(); ++i) initial.push_back(to_floats(params[i], "params[" + std::to_string(i) + "]"));
    return value_or_raise(optimizer::create(k, h, value_or_raise(parse_policy(policy)), initial, seed));
  }
  std::size_t check(std::size_t i) const {
    if (i >= shapes_.size())
      throw py::value_error("tensor " + std::to_string(i) + " (valid: 0.." + std::to_string(shapes_.size() - 1) + ")");
    return i;
  }
  optimizer opt_;
  std::vector<std::vector<py::ssize_t>> shapes_;
};

py::tuple dataset_arrays(const dataset& d) {
  py::array x = reshaped(floats_array(d.x), std::vector<py::ssize_t>{d.rows, d.cols}).cast<py::array>();
  return py::make_tuple(x, floats_array(d.y));
}

dataset dataset_from(const py::array& x, const py::array& y, const std::string& name) {
  const auto [rows, cols] = matrix_shape(x, "x_" + name);
  if (y.ndim() != 1 || y.shape(0) != rows)
    throw py::value_error("y_" + name + " must be 1-D with one label per row of x_" + name + " (" + std::to_string(rows) +
                          "); got shape " + std::string(py::str(py::cast(shape_of(y)))));
  dataset d;
  d.rows = rows;
  d.cols = cols;
  d.x = to_floats(x, "x_" + name);
  d.y = to_floats(y, "y_" + name);
  d.source = name + " set";
  for (std::size_t i = 0; i < d.x.size(); ++i)
    if (!std::isfinite(d.x[i]))
      throw py::value_error("x_" + name + " has a non-finite value at row " + std::to_string(i / static_cast<std::size_t>(cols)) +
                            ", column " + std::to_string(i % static_cast<std::size_t>(cols)));
  return d;
}

py::dict epoch_dict(const epoch_record& e) {
  py::dict d;
  d["epoch"] = e.epoch;
  d["train_loss"] = e.train_loss;
  d["test_loss"] = e.test_loss;
  d["test_accuracy"] = e.test_accuracy;
  d["steps"] = e.steps;
  d["seconds"] = e.seconds;
  return d;
}

py::dict memory_dict(const memory_account& a) {
  py::list parts;
  for (const memory_component& c : a.components) parts.append(py::make_tuple(c.name, c.bytes, c.optional));
  py::dict d;
  d["components"] = parts;
  d["min"] = a.min;
  d["max"] = a.max;
  return d;
}

py::dict train_impl(const py::array& x_train, const py::array& y_train, const py::array& x_test, const py::array& y_test,
                    const std::string& model, int hidden, int classes, const std::string& opt, const std::string& policy,
                    double lr, double momentum, double dampening, bool nesterov, double weight_decay, double beta1,
                    const std::optional<double>& beta2, double eps, int epochs, int batch, int grad_accum,
                    double clip_norm, std::uint64_t seed, int threads, const std::string& gemm, int gemm_error_every,
                    int gemm_error_rows, const py::object& progress) {
  train_options o;
  o.shape.kind = value_or_raise(parse_model_kind(model));
  o.optimizer = value_or_raise(parse_optimizer(opt));
  o.hyper = hyper_from(o.optimizer, lr, momentum, dampening, nesterov, weight_decay, beta1, beta2, eps);
  o.policy = value_or_raise(parse_policy(policy));
  if (epochs < 1 || batch < 1 || grad_accum < 1)
    throw py::value_error("epochs = " + std::to_string(epochs) + ", batch = " + std::to_string(batch) +
                          ", grad_accum = " + std::to_string(grad_accum) + " (valid: >= 1 each)");
  if (!(clip_norm >= 0) || !std::isfinite(clip_norm))
    throw py::value_error("clip_norm = " + number(clip_norm) + " (valid: 0 for none, or finite > 0)");
  o.epochs = epochs;
  o.batch = batch;
  o.grad_accum = grad_accum;
  o.clip_norm = clip_norm;
  o.seed = seed;
  o.threads = thread_count(threads);
  o.gemm = value_or_raise(parse_gemm_recipe(gemm));
  if (gemm_error_every < 0 || gemm_error_rows < 1)
    throw py::value_error("gemm_error_every = " + std::to_string(gemm_error_every) + ", gemm_error_rows = " +
                          std::to_string(gemm_error_rows) + " (valid: every >= 0, 0 for none; rows >= 1)");
  o.probe_every = gemm_error_every;
  o.probe_rows = gemm_error_rows;
  const dataset train_set = dataset_from(x_train, y_train, "train"), test_set = dataset_from(x_test, y_test, "test");
  o.shape.inputs = train_set.cols;
  o.shape.hidden = hidden;
  o.shape.classes = classes;
  // Checked before training, not after the first epoch.
  if (!progress.is_none() && !PyCallable_Check(progress.ptr()))
    throw py::type_error("progress must be a callable taking the epoch dict, or None; got " +
                         std::string(py::str(py::repr(progress))));
  std::function<void(const epoch_record&)> report;
  if (!progress.is_none())
    report = [&progress](const epoch_record& e) {
      py::gil_scoped_acquire locked;
      progress(epoch_dict(e));
    };
  expected<train_result> r = without_gil([&] { return train(train_set, test_set, o, report); });
  const train_result result = value_or_raise(std::move(r));
  py::list epoch_list;
  for (const epoch_record& e : result.epochs) epoch_list.append(epoch_dict(e));
  py::dict d;
  d["epochs"] = epoch_list;
  d["step_losses"] = doubles_array(result.step_losses);
  d["memory"] = memory_dict(result.memory);
  d["optimizer_bytes"] = result.optimizer_bytes;
  py::list errors;
  for (const gemm_error_record& r : result.gemm_errors) {
    py::dict e;
    e["step"] = r.step;
    e["layer"] = r.error.layer;
    e["M"] = r.error.M;
    e["N"] = r.error.N;
    e["K"] = r.error.K;
    e["rows"] = r.error.rows;
    e["error_original"] = r.error.normwise_original;
    e["error_quantised"] = r.error.normwise_quantised;
    errors.append(e);
  }
  d["gemm_errors"] = errors;
  return d;
}

}  // namespace

void bind_training(py::module_& m) {
  py::class_<precision_policy>(m, "policy", "A precision policy: where weights, states and gradients live and how updates are stored.")
      .def(py::init([](const std::string& name) { return value_or_raise(parse_policy(name)); }), py::arg("name"),
           "fp32 | mixed | mixed-fp16 | FMT[-kahan|-zamirai|-sr[K]][-ops].")
      .def_readonly("name", &precision_policy::name)
      .def_readonly("weights", &precision_policy::weights)
      .def_readonly("states", &precision_policy::states)
      .def_readonly("grads", &precision_policy::grads)
      .def_readonly("master", &precision_policy::master)
      .def_property_readonly("rule", [](const precision_policy& p) {
        constexpr const char* names[] = {"nearest", "kahan", "kahan_zamirai", "stochastic"};
        return std::string(names[static_cast<int>(p.rule)]);
      }, "How the weight update is stored: nearest, kahan, kahan_zamirai or stochastic.")
      .def_property_readonly("math", [](const precision_policy& p) {
        return std::string(p.math == update_math::fused ? "fused" : "per_op");
      }, "fused: binary32 math, one rounding per stored tensor; per_op: every tensor operation rounded.")
      .def_readonly("sr_bits", &precision_policy::sr_bits)
      .def("__repr__", [](const precision_policy& p) { return "fpemu.policy('" + p.name + "')"; });

  m.def(
      "bytes_per_parameter",
      [](const std::string& opt, const std::string& policy, double lr, double momentum, double dampening, bool nesterov,
         double weight_decay, double beta1, const std::optional<double>& beta2, double eps) {
        const optimizer_kind k = value_or_raise(parse_optimizer(opt));
        return memory_dict(bytes_per_parameter(
            k, hyper_from(k, lr, momentum, dampening, nesterov, weight_decay, beta1, beta2, eps),
            value_or_raise(parse_policy(policy))));
      },
      py::arg("optimizer"), py::arg("policy"), py::kw_only(), FPEMU_HYPER_ARGS,
      (std::string("Bytes per parameter as optimi's table (Warner 2023) counts them: dict with components [(name, bytes,\n"
                   "optional)], min (required buffers) and max (with the optional ones).\n") +
       hyper_doc)
          .c_str());

  py::class_<py_optimizer>(m, "optimizer",
                           "An optimizer (sgd, adam, adamw, lion) under a precision policy, over numpy tensors.\n"
                           "Follows torch.optim's single-tensor implementations operation by operation in binary32,\n"
                           "so the fp32 policy reproduces PyTorch's trajectories bit for bit.")
      .def(py::init([](const std::string& kind, const std::vector<py::array>& params, const std::string& policy,
                       double lr, double momentum, double dampening, bool nesterov, double weight_decay, double beta1,
                       const std::optional<double>& beta2, double eps, std::uint64_t seed) {
             const optimizer_kind k = value_or_raise(parse_optimizer(kind));
             return py_optimizer(k, params, policy,
                                 hyper_from(k, lr, momentum, dampening, nesterov, weight_decay, beta1, beta2, eps), seed);
           }),
           py::arg("kind"), py::arg("params"), py::arg("policy") = "fp32", py::kw_only(), FPEMU_HYPER_ARGS,
           py::arg("seed") = 0,
           (std::string("params: the initial tensors (float arrays, any shapes), rounded into the policy's storage\n"
                        "with nearest-even. seed keys stochastic rounding.\n") +
            hyper_doc)
               .c_str())
      .def("step", &py_optimizer::step, py::arg("grads"),
           "One step with one gradient per tensor (same shapes), rounded into the policy's gradient format.")
      .def("weights", &py_optimizer::weights, py::arg("i"),
           "Tensor i as the model computes with it (the low-precision copy under mixed), float32.")
      .def("updated_weights", &py_optimizer::updated_weights, py::arg("i"),
           "Tensor i as the update acts on it (the fp32 master under mixed), float32.")
      .def("state", &py_optimizer::state, py::arg("i"), py::arg("k"),
           "State k of tensor i (sgd: 0 momentum; adam/adamw: 0 exp_avg, 1 exp_avg_sq; lion: 0 m), or None.")
      .def("compensation", &py_optimizer::compensation, py::arg("i"),
           "The Kahan compensation of tensor i (kahan, kahan_zamirai policies), or None.")
      .def_property("lr", [](const py_optimizer& o) { return o.get().hyper().lr; },
                    [](py_optimizer& o, double lr) {
                      if (!(lr >= 0) || !std::isfinite(lr))
                        throw py::value_error("lr = " + number(lr) + " (valid: finite >= 0)");
                      o.get().set_lr(lr);
                    }, "The learning rate (settable, for schedules).")
      .def_property_readonly("steps", [](const py_optimizer& o) { return o.get().steps(); })
      .def_property_readonly("tensors", [](const py_optimizer& o) { return o.get().tensors(); })
      .def_property_readonly("bytes", [](const py_optimizer& o) { return o.get().bytes(); },
                             "Bytes held by weights, master copy, states and compensation.")
      .def_property_readonly("policy", [](const py_optimizer& o) { return o.get().policy(); });

  m.def(
      "load_fashion_mnist",
      [](bool train, const std::optional<std::string>& dir) {
        return dataset_arrays(value_or_raise(read_fashion_mnist(dir ? *dir : default_fashion_mnist_dir(), train)));
      },
      py::arg("train") = true, py::arg("dir") = py::none(),
      "Fashion-MNIST as (x, y): x float32 (rows, 784) with pixels in [0, 1], y the class indices as float32.\n"
      "dir defaults to $FPEMU_FASHION_MNIST_DIR, else where Debian's dataset-fashion-mnist installs it.");
  m.def(
      "load_libsvm",
      [](const std::optional<std::string>& path, int min_cols) {
        if (min_cols < 0) throw py::value_error("min_cols = " + std::to_string(min_cols) + " (valid: >= 0)");
        return dataset_arrays(value_or_raise(read_libsvm(path ? *path : default_heart_scale_path(), min_cols)));
      },
      py::arg("path") = py::none(), py::arg("min_cols") = 0,
      "A LIBSVM file as (x, y) float32 arrays; path defaults to heart_scale from Debian's liblinear-tools.");

  m.def("train", &train_impl, py::arg("x_train"), py::arg("y_train"), py::arg("x_test"), py::arg("y_test"),
        py::kw_only(), py::arg("model") = "mlp", py::arg("hidden") = 256, py::arg("classes") = 10,
        py::arg("optimizer") = "sgd", py::arg("policy") = "fp32", FPEMU_HYPER_ARGS, py::arg("epochs") = 1,
        py::arg("batch") = 128, py::arg("grad_accum") = 1, py::arg("clip_norm") = 0.0, py::arg("seed") = 1,
        py::arg("threads") = 0, py::arg("gemm") = "weights", py::arg("gemm_error_every") = 0,
        py::arg("gemm_error_rows") = 8, py::arg("progress") = py::none(),
        (std::string("Mini-batch training of a model (mlp: inputs -> hidden ReLU -> classes; logreg; linreg) under a\n"
                     "precision policy, with grad_accum micro-batches per step and optional global-norm clipping.\n"
                     "Labels: class indices (mlp), -1/+1 (logreg), any finite value (linreg). Returns a dict: epochs\n"
                     "(train_loss, test_loss, test_accuracy, steps, seconds per epoch), step_losses, memory and\n"
                     "optimizer_bytes. progress(epoch_dict) is called after every epoch. Deterministic in seed.\n"
                     "gemm: how the model's GEMMs compute, as fpemu train --gemm: 'FORMAT/SCALING/ACCUMULATOR'\n"
                     "(FORMAT 'weights': the policy's weight format) or a name: weights, bf16, fp8-fastaccum,\n"
                     "fp8-deepseek (e4m3fn/tile128/h100-e4m3-deepseek), fp8-tensor, fp8-unscaled (gemm_recipes()).\n"
                     "gemm_error_every = N > 0 measures every GEMM of the first micro-batch of steps 1, N + 1, ...\n"
                     "on the first gemm_error_rows rows of its output: gemm_errors, a list of dicts with step, layer\n"
                     "(fprop1 fprop2 wgrad2 dgrad2 wgrad1), M, N, K, rows, error_original (normwise, against the\n"
                     "product of the operands before rounding) and error_quantised (against the exact product of\n"
                     "the rounded operands).\n") +
         hyper_doc)
            .c_str());

  m.def(
      "gemm_recipes",
      [] {
        py::dict d;
        for (const named_gemm_recipe& r : gemm_recipes()) d[py::str(std::string(r.name))] = std::string(r.spec);
        return d;
      },
      "The named GEMM recipes of train(gemm=...): name -> FORMAT/SCALING/ACCUMULATOR.");

  m.def(
      "theorem1_floor",
      [](const py::object& fmt, const std::vector<double>& lrs, int dim, std::uint64_t seed) {
        const format f = value_or_raise(storage_format(to_format(fmt)));
        if (dim < 1 || dim > (1 << 20)) throw py::value_error("dim = " + std::to_string(dim) + " (valid: 1..2^20)");
        for (double lr : lrs)
          if (!(lr > 0 && lr < 1)) throw py::value_error("lr = " + number(lr) + " (valid: 0 < lr < 1)");
        py::list out;
        const auto rows = without_gil([&] { return theorem1_floor(f, lrs, dim, seed); });
        for (const floor_row& r : rows) {
          py::dict d;
          d["lr"] = r.lr;
          d["predicted"] = r.predicted;
          d["nearest"] = r.nearest;
          d["kahan"] = r.kahan;
          d["stochastic"] = r.stochastic;
          d["fp32"] = r.fp32;
          d["steps"] = r.steps;
          out.append(d);
        }
        return out;
      },
      py::arg("fmt") = "bf16", py::arg("lrs") = std::vector<double>{0.1, 0.01, 0.001}, py::arg("dim") = 64,
      py::arg("seed") = 1,
      "Theorem 1 of Zamirai et al. 2020 on f(w) = 1/2 sum_j lambda_j (w_j - w*_j)^2, lambda_j in [1/2, 1] (L = 1), w*_j in\n"
      "[1, 2] on fmt's grid, dim weights, gradient descent from w = 0 for ceil(80/lr) steps. Nearest rounding\n"
      "stalls at a distance of at least predicted = min(u (1 - lr) / (lr + u) min|w*|, ||w*||), u = 2^-p of\n"
      "fmt, growing as lr shrinks; Kahan and stochastic rounding keep converging. One dict per lr with the\n"
      "distances ||w - w*|| reached by nearest, kahan, stochastic (16 bits) and fp32.");
}

}  // namespace fpemu::python
