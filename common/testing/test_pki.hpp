// A throwaway PKI for tests of SSL swarms, made with the openssl command line (Debian's openssl package):
// an operator's CA and box certificates signed by it, as docs/operations.md tells an operator to make them.
// Elliptic-curve keys (P-256), so that making one takes milliseconds.
#pragma once

#include <filesystem>
#include <string>

namespace toast::testing {

struct TestCa {
    std::filesystem::path cert;  // PEM, basicConstraints CA:TRUE
    std::filesystem::path key;
};

struct TestCert {
    std::filesystem::path cert;  // PEM, signed by the CA
    std::filesystem::path key;
};

// Writes NAME-ca.pem and NAME-ca.key into `dir`. Throws std::runtime_error with openssl's output on failure.
TestCa make_test_ca(const std::filesystem::path& dir, const std::string& name);

// Writes NAME.pem and NAME.key into `dir`: a box certificate signed by `ca` whose subject alternative name
// is DNS:`dns_name` ("*" for every torrent of the CA), valid from now for `days`.
TestCert make_test_cert(const std::filesystem::path& dir, const TestCa& ca, const std::string& name,
                        const std::string& dns_name = "*", int days = 30);

}  // namespace toast::testing
