#include <algorithm>
#include <array>
#include <atomic>
#include <bitset>
#include <chrono>
#include <complex>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <iomanip>
#include <iostream>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <queue>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <variant>
#include <vector>

template <typename K, typename V> std::map<K, std::vector<V>> group(const std::vector<std::pair<K, V>>& xs) {
    std::map<K, std::vector<V>> out;
    for (auto& [k, v] : xs) out[k].push_back(v);
    return out;
}

int main() {
    std::vector<std::pair<std::string, int>> xs;
    std::mt19937 rng(1);
    for (int i = 0; i < 1000; i++) xs.emplace_back(std::to_string(rng() % 100), i);
    auto g = group(xs);
    std::regex re("([0-9]+)");
    std::unordered_map<std::string, std::set<int>> idx;
    for (auto& [k, v] : g) for (int x : v) idx[k].insert(x);
    std::variant<int, std::string> var = std::string("x");
    std::cout << g.size() << idx.size() << std::get<std::string>(var) << std::endl;
    return 0;
}
