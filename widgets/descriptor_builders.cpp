// SPDX-License-Identifier: MIT
#include "descriptor_builders.h"

#include "vramlab/scenario_fields.h"

#include <type_traits>
#include <variant>

namespace vramlab {

using K = ParamDescriptor::Kind;

/// The fields every descriptor has; get, set and applies are filled in by the caller.
ParamDescriptor describe(
    QString key, QString group, QString label, QString unit, QString tip, K kind, double lo, double hi, int decimals)
{
    ParamDescriptor d;
    d.key = std::move(key);
    d.group = std::move(group);
    d.label = std::move(label);
    d.unit = std::move(unit);
    d.tooltip = std::move(tip);
    d.kind = kind;
    d.min = lo;
    d.max = hi;
    d.decimals = decimals;
    return d;
}

/// A custom GPU derived from the current one (or an H100), under its own name.
GpuSpec customGpu(const Scenario& s)
{
    GpuSpec g = s.run.gpu.value_or(*findGpu("h100-sxm-80gb"));
    g.name = "custom";
    g.displayName = "Custom GPU";
    return g;
}

QVariant jsonToVariant(const nlohmann::json& v)
{
    return v.is_null()          ? QVariant()
        : v.is_string()         ? QVariant(QString::fromStdString(v.get<std::string>()))
        : v.is_boolean()        ? QVariant(v.get<bool>())
        : v.is_number_integer() ? QVariant::fromValue<qlonglong>(v.get<qlonglong>())
                                : QVariant(v.get<double>());
}

bool training(const Scenario& s)
{
    return s.run.mode == Mode::Training;
}
bool inference(const Scenario& s)
{
    return s.run.mode == Mode::Inference && !s.run.serving; // serving has the engine's own flags
}
bool always(const Scenario&)
{
    return true;
}

namespace {

QVariant toVariant(const FieldValue& v)
{
    return std::visit(
        [](const auto& x) -> QVariant {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, std::monostate>)
                return QVariant();
            else if constexpr (std::is_same_v<T, Count>)
                return QVariant::fromValue<qlonglong>(x);
            else if constexpr (std::is_same_v<T, std::string>)
                return QVariant(QString::fromStdString(x));
            else
                return QVariant(x);
        },
        v);
}

FieldValue toFieldValue(const ScenarioField& f, const QVariant& v)
{
    if (!v.isValid())
        return {};
    switch (f.kind) {
    case FieldKind::Integer:
        return Count(v.toLongLong());
    case FieldKind::Real:
        return v.toDouble();
    case FieldKind::Boolean:
        return v.toBool();
    default:
        return v.toString().toStdString();
    }
}

} // namespace

/// A control over one key of the core's field table: reading and writing it is the table's
/// (the same code the files go through); the descriptor adds only how it is shown.
ParamDescriptor fieldControl(QString key, QString group, QString label, QString unit, QString tip, K kind, double lo,
    double hi, std::function<bool(const Scenario&)> applies, int decimals)
{
    const ScenarioField* f = findField(key.toStdString());
    Q_ASSERT_X(f, "parameterDescriptors", "a control without a scenario field");
    ParamDescriptor d = describe(
        std::move(key), std::move(group), std::move(label), std::move(unit), std::move(tip), kind, lo, hi, decimals);
    d.get = [f](const Scenario& s) { return toVariant(f->get(s)); };
    d.set = [f](Scenario& s, const QVariant& v) { f->set(s, toFieldValue(*f, v)); };
    d.applies = std::move(applies);
    return d;
}

ParamDescriptor integer(QString key, QString group, QString label, QString unit, QString tip, K kind, double lo,
    double hi, std::function<bool(const Scenario&)> applies)
{
    return fieldControl(std::move(key), std::move(group), std::move(label), std::move(unit), std::move(tip), kind, lo,
        hi, std::move(applies));
}

ParamDescriptor withDefault(ParamDescriptor d, const QString& shown)
{
    d.choices.prepend(QStringLiteral("default"));
    d.choiceLabels.prepend(shown);
    d.get = [get = d.get](const Scenario& s) {
        const QVariant v = get(s);
        return v.isValid() ? v : QVariant(QStringLiteral("default"));
    };
    d.set = [set = d.set](
                Scenario& s, const QVariant& v) { set(s, v.toString() == QLatin1String("default") ? QVariant() : v); };
    return d;
}

ParamDescriptor withFrameworkDefault(ParamDescriptor d)
{
    return withDefault(std::move(d), QStringLiteral("Framework default"));
}

ParamDescriptor toggle(
    QString key, QString group, QString label, QString tip, std::function<bool(const Scenario&)> applies)
{
    return fieldControl(std::move(key), std::move(group), std::move(label), QString(), std::move(tip), K::Toggle, 0, 0,
        std::move(applies));
}

} // namespace vramlab
