#include "sim/core/experiment.hpp"

#include <fstream>
#include <sstream>

namespace toast::sim {

using nlohmann::json;
using nlohmann::ordered_json;

bool is_experiment(const json& data) {
    return data.is_object() && data.contains("sweep");
}

std::string python_str(const json& v) {
    if (v.is_string()) return v.get<std::string>();
    if (v.is_boolean()) return v.get<bool>() ? "True" : "False";
    if (v.is_null()) return "None";
    if (v.is_number_float()) {
        std::string s = v.dump();
        if (s.find_first_of(".eE") == std::string::npos) s += ".0";
        return s;
    }
    return v.dump();
}

const std::string& ExperimentRow::name() const {
    return std::visit([](const auto& s) -> const std::string& { return s.name; }, scenario);
}

Experiment expand_experiment(const ordered_json& base, const std::string& name, const ordered_json& data) {
    for (const char* key : {"figure", "title", "sweep", "thesis"})
        if (!data.contains(key)) throw ScenarioError("experiment " + name + ": missing '" + key + "'");
    Experiment e;
    e.name = name;
    for (const char* key : {"figure", "title", "thesis"})
        e.meta[key] = data.at(key);
    const auto& sweep = data.at("sweep");
    std::vector<std::string> keys;
    std::vector<std::vector<ordered_json>> values;
    for (const auto& [k, v] : sweep.items()) {
        keys.push_back(k);
        values.emplace_back(v.begin(), v.end());
    }
    // itertools.product: the last key varies fastest.
    std::vector<ordered_json> combos;
    std::vector<std::size_t> at(keys.size(), 0);
    bool empty = std::any_of(values.begin(), values.end(), [](const auto& v) { return v.empty(); });
    while (!empty) {
        ordered_json params = ordered_json::object();
        for (std::size_t i = 0; i < keys.size(); ++i)
            params[keys[i]] = values[i][at[i]];
        combos.push_back(params);
        std::size_t i = keys.size();
        while (i > 0) {
            --i;
            if (++at[i] < values[i].size()) break;
            at[i] = 0;
            if (i == 0) empty = true;
        }
        if (keys.empty()) break;
    }
    if (data.contains("also"))
        for (const auto& a : data.at("also"))
            combos.push_back(a);
    for (const auto& params : combos) {
        ordered_json merged = base;
        if (data.contains("base"))
            for (const auto& [k, v] : data.at("base").items())
                merged[k] = v;
        std::string label;
        for (const auto& [k, v] : params.items()) {
            merged[k] = v;
            label += (label.empty() ? "" : ",") + k + "=" + python_str(v);
        }
        merged["name"] = name + "[" + label + "]";
        try {
            e.rows.push_back({label, params, scenario_from_json(json(merged), name)});
        } catch (const ScenarioError& err) {
            throw ScenarioError("experiment " + name + " [" + label + "]: " + err.what());
        }
    }
    return e;
}

Experiment load_experiment(const std::filesystem::path& file) {
    auto read = [](const std::filesystem::path& p) {
        std::ifstream in(p);
        if (!in) throw ScenarioError("cannot read " + p.string());
        std::stringstream ss;
        ss << in.rdbuf();
        try {
            return ordered_json::parse(ss.str());
        } catch (const json::parse_error& e) {
            throw ScenarioError(p.string() + ": not valid JSON: " + e.what());
        }
    };
    const auto base_file = file.parent_path() / "_base.json";
    const auto base = read(base_file);
    if (!base.contains("scenario"))
        throw ScenarioError("cannot read " + base_file.string() + ": no \"scenario\"");
    return expand_experiment(base.at("scenario"), file.stem().string(), read(file));
}

}  // namespace toast::sim
