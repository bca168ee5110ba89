// uroce-mangen: writes a man page from its template (apps/man/*.in), at
// build time. Lists come from the code the programs parse with, never from
// a copy:
//   @UROCED_OPTIONS@  uroced's options (daemon::command_line_help, the
//                     parser's own CLI11 list)
//   @CONFIG_KEYS@     every configuration key (daemon::keys_man, the key
//                     tables, as `uroce-ctl keys` and docs/config-keys.md)
//   @CTL_OPTIONS@     uroce-ctl's options (ctl_tool::add_options)
//   @CTL_COMMANDS@    uroce-ctl's commands (ctl_tool::commands)
// Each of these must stand alone on its line. Any other @NAME@ is replaced
// wherever it is by the VALUE of a NAME=VALUE argument (a version, a path).
//
//   uroce-mangen TEMPLATE OUTPUT [NAME=VALUE]...
//
// Exit 0, or 1 with a message when a placeholder has no value.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "apps/uroce-ctl/cli.h"
#include "apps/uroced/config.h"
#include "apps/uroced/config_keys.h"

namespace {

// Text for roff: a backslash as \e, a hyphen as \- (options are typed as
// they are shown), a leading control character guarded, and a break point
// (\:) after each ',' and ';' not followed by a space, so that a long
// device spec can wrap.
std::string roff(const std::string& s, bool minus = false) {
  std::string out;
  if (!s.empty() && (s[0] == '.' || s[0] == '\'')) out += "\\&";
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-' && minus) {
      out += "\\-";
    } else {
      out += c;
      if ((c == ',' || c == ';') && i + 1 < s.size() && s[i + 1] != ' ') out += "\\:";
    }
  }
  return out;
}

// "-h,--help" -> "\fB\-h\fR, \fB\-\-help\fR", then the value's name.
std::string option_tag(const std::string& names, const std::string& value) {
  std::string out;
  std::stringstream ss(names);
  std::string n;
  while (std::getline(ss, n, ',')) {
    if (!out.empty()) out += ", ";
    out += "\\fB" + roff(n, true) + "\\fR";
  }
  if (!value.empty()) out += " \\fI" + roff(value) + "\\fR";
  return out;
}

std::string uroced_options() {
  std::string out;
  for (const uroce::daemon::OptionHelp& o : uroce::daemon::command_line_help()) {
    out += ".TP\n" + option_tag(o.names, o.value) + "\n" + roff(o.help) + "\n";
  }
  return out;
}

std::string ctl_options() {
  CLI::App app{uroce::ctl_tool::kAppHelp};
  uroce::ctl_tool::Options o;
  uroce::ctl_tool::add_options(app, &o);
  std::string out;
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->get_positional()) continue;
    const std::string value = opt->get_items_expected_max() == 0 ? "" : opt->get_type_name();
    out += ".TP\n" + option_tag(opt->get_name(false, true), value) + "\n" +
           roff(opt->get_description()) + "\n";
  }
  return out;
}

std::string ctl_commands() {
  std::string out;
  for (const uroce::ctl_tool::Command& c : uroce::ctl_tool::commands()) {
    out += ".TP\n.B " + std::string(c.name) + "\n" + roff(std::string(c.help)) + "\n";
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: uroce-mangen TEMPLATE OUTPUT [NAME=VALUE]...\n");
    return 2;
  }
  std::map<std::string, std::string> values;
  for (int i = 3; i < argc; ++i) {
    const std::string a = argv[i];
    const std::size_t eq = a.find('=');
    if (eq == std::string::npos) {
      std::fprintf(stderr, "uroce-mangen: %s is not NAME=VALUE\n", argv[i]);
      return 2;
    }
    values["@" + a.substr(0, eq) + "@"] = a.substr(eq + 1);
  }
  const std::map<std::string, std::string (*)()> blocks = {
      {"@UROCED_OPTIONS@", &uroced_options},
      {"@CONFIG_KEYS@", [] { return uroce::daemon::keys_man(); }},
      {"@CTL_OPTIONS@", &ctl_options},
      {"@CTL_COMMANDS@", &ctl_commands},
  };
  std::ifstream in(argv[1]);
  if (!in) {
    std::fprintf(stderr, "uroce-mangen: cannot read %s\n", argv[1]);
    return 1;
  }
  std::string out, line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (auto b = blocks.find(line); b != blocks.end()) {
      out += b->second();
      continue;
    }
    for (const auto& [name, value] : values) {
      for (std::size_t p = line.find(name); p != std::string::npos;
           p = line.find(name, p + value.size())) {
        line.replace(p, name.size(), value);
      }
    }
    if (const std::size_t at = line.find('@'); at != std::string::npos) {
      const std::size_t end = line.find('@', at + 1);
      if (end != std::string::npos && end > at + 1 &&
          line.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ_", at + 1) == end) {
        std::fprintf(stderr, "uroce-mangen: %s:%d: %s has no value\n", argv[1], lineno,
                     line.substr(at, end - at + 1).c_str());
        return 1;
      }
    }
    out += line + "\n";
  }
  std::ofstream o(argv[2]);
  o << out;
  if (!o) {
    std::fprintf(stderr, "uroce-mangen: cannot write %s\n", argv[2]);
    return 1;
  }
  return 0;
}
