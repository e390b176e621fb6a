#include "test_pki.hpp"

#include <fstream>
#include <stdexcept>

#include "test_support.hpp"

namespace toast::testing {

namespace {

void openssl(const std::vector<std::string>& args) {
    auto r = run("/usr/bin/openssl", args, std::chrono::seconds(30));
    if (r.exit_code != 0) throw std::runtime_error("openssl " + args.front() + " failed: " + r.err + r.out);
}

}  // namespace

TestCa make_test_ca(const std::filesystem::path& dir, const std::string& name) {
    TestCa ca{dir / (name + "-ca.pem"), dir / (name + "-ca.key")};
    openssl({"req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "30",
             "-subj", "/CN=" + name + " CA", "-keyout", ca.key.string(), "-out", ca.cert.string()});
    return ca;
}

TestCert make_test_cert(const std::filesystem::path& dir, const TestCa& ca, const std::string& name,
                        const std::string& dns_name, int days) {
    TestCert c{dir / (name + ".pem"), dir / (name + ".key")};
    const auto csr = dir / (name + ".csr");
    const auto ext = dir / (name + ".ext");
    std::ofstream(ext) << "subjectAltName=DNS:" << dns_name << "\nbasicConstraints=CA:FALSE\n";
    openssl({"req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj",
             "/CN=" + name, "-keyout", c.key.string(), "-out", csr.string()});
    openssl({"x509", "-req", "-in", csr.string(), "-CA", ca.cert.string(), "-CAkey", ca.key.string(),
             "-CAcreateserial", "-extfile", ext.string(), "-days", std::to_string(days), "-out",
             c.cert.string()});
    return c;
}

}  // namespace toast::testing
