// Vulcan's export_to_csv (tanged123/vulcan include/vulcan/io/CSVExport.hpp, the code Icarus
// runs for `export_csv`), fed from a CSV instead of an HDF5 reader: every cell after the
// header is read as a double with strtod (as HDF5Reader::read_double hands doubles over),
// then the header and rows are written with Vulcan's own loop: std::setprecision(15),
// ',' and "\n"; nothing is written for zero frames.
// Usage: vulcan_export IN.csv > OUT.csv
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

static std::vector<std::string> split(const std::string &line) {
    std::vector<std::string> cells;
    std::string cell;
    std::istringstream in(line);
    while (std::getline(in, cell, ',')) cells.push_back(cell);
    if (!line.empty() && line.back() == ',') cells.push_back("");
    return cells;
}

int main(int argc, char **argv) {
    if (argc != 2) return 2;
    std::ifstream in(argv[1]);
    std::string line;
    if (!std::getline(in, line)) return 0; // an empty file: zero frames
    std::vector<std::string> header = split(line);
    std::vector<std::string> signals(header.begin() + 1, header.end());
    std::vector<double> times;
    std::vector<std::vector<double>> signal_data(signals.size());
    while (std::getline(in, line)) {
        std::vector<std::string> cells = split(line);
        if (cells.size() != header.size()) {
            std::cerr << "row of " << cells.size() << " cells\n";
            return 1;
        }
        times.push_back(std::strtod(cells[0].c_str(), nullptr));
        for (size_t j = 0; j < signals.size(); ++j)
            signal_data[j].push_back(std::strtod(cells[j + 1].c_str(), nullptr));
    }
    size_t n_frames = times.size();
    if (n_frames == 0) return 0;
    std::ostream &out = std::cout;
    // From here on: Vulcan's export_to_csv.
    out << std::setprecision(15);
    out << "time";
    for (const auto &sig : signals) out << ',' << sig;
    out << "\n";
    for (size_t i = 0; i < n_frames; ++i) {
        out << times[i];
        for (size_t j = 0; j < signals.size(); ++j) out << ',' << signal_data[j][i];
        out << "\n";
    }
    return 0;
}
