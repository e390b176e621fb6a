#include "toast/common/peer_certs.hpp"

#include <memory>
#include <vector>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

namespace toast {

namespace {

template <class T, void (*Free)(T*)>
struct Deleter {
    void operator()(T* p) const { Free(p); }
};
using Bio = std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>>;
using Cert = std::unique_ptr<X509, Deleter<X509, X509_free>>;
using Key = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using Store = std::unique_ptr<X509_STORE, Deleter<X509_STORE, X509_STORE_free>>;
using StoreCtx = std::unique_ptr<X509_STORE_CTX, Deleter<X509_STORE_CTX, X509_STORE_CTX_free>>;

void free_names(GENERAL_NAMES* names) {
    GENERAL_NAMES_free(names);
}
using Names = std::unique_ptr<GENERAL_NAMES, Deleter<GENERAL_NAMES, free_names>>;

Bio memory(std::string_view pem) {
    return Bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

Cert read_cert(std::string_view pem) {
    auto bio = memory(pem);
    Cert c(bio ? PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr) : nullptr);
    ERR_clear_error();
    return c;
}

std::string text_of(const unsigned char* data, int length) {
    return std::string(reinterpret_cast<const char*>(data), static_cast<std::size_t>(length));
}

// The names libtorrent matches against a torrent's name: the DNS subject alternative names, else the last
// common name.
std::vector<std::string> peer_names(X509* cert) {
    std::vector<std::string> out;
    Names names(static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr)));
    for (int i = 0; names && i < sk_GENERAL_NAME_num(names.get()); ++i) {
        const GENERAL_NAME* gen = sk_GENERAL_NAME_value(names.get(), i);
        if (gen->type != GEN_DNS || !gen->d.dNSName) continue;
        out.push_back(text_of(ASN1_STRING_get0_data(gen->d.dNSName), ASN1_STRING_length(gen->d.dNSName)));
    }
    X509_NAME* subject = X509_get_subject_name(cert);
    int i = -1;
    const ASN1_STRING* common_name = nullptr;
    while ((i = X509_NAME_get_index_by_NID(subject, NID_commonName, i)) >= 0)
        common_name = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, i));
    if (common_name)
        out.push_back(text_of(ASN1_STRING_get0_data(common_name), ASN1_STRING_length(common_name)));
    return out;
}

}  // namespace

std::optional<std::string> check_ca_certificate(std::string_view pem) {
    auto ca = read_cert(pem);
    if (!ca) return "not a PEM certificate (expected -----BEGIN CERTIFICATE-----)";
    if (X509_check_ca(ca.get()) == 0)
        return "the certificate is not a CA certificate (no basicConstraints CA:TRUE), so it signs no box";
    return std::nullopt;
}

std::optional<std::string> check_certificate_key(std::string_view cert_pem, std::string_view key_pem) {
    auto cert = read_cert(cert_pem);
    if (!cert) return "the certificate file holds no PEM certificate";
    auto key_bio = memory(key_pem);
    Key key(key_bio ? PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr) : nullptr);
    ERR_clear_error();
    if (!key) return "the key file holds no PEM private key (an encrypted key is not supported)";
    if (X509_check_private_key(cert.get(), key.get()) != 1) {
        ERR_clear_error();
        return "the private key does not belong to the certificate";
    }
    return std::nullopt;
}

std::optional<std::string> check_peer_certificate(std::string_view cert_pem, std::string_view key_pem,
                                                  std::string_view ca_pem, std::string_view torrent_name) {
    if (auto problem = check_certificate_key(cert_pem, key_pem)) return problem;
    auto cert = read_cert(cert_pem);
    auto ca = read_cert(ca_pem);
    if (!ca) return "the torrent's CA (ssl-cert) is not a PEM certificate";

    Store store(X509_STORE_new());
    StoreCtx ctx(X509_STORE_CTX_new());
    if (!store || !ctx || X509_STORE_add_cert(store.get(), ca.get()) != 1 ||
        X509_STORE_CTX_init(ctx.get(), store.get(), cert.get(), nullptr) != 1) {
        ERR_clear_error();
        return "OpenSSL could not set up the certificate check";
    }
    if (X509_verify_cert(ctx.get()) != 1) {
        const int err = X509_STORE_CTX_get_error(ctx.get());
        ERR_clear_error();
        return std::string("the certificate is not signed by the torrent's CA (") +
               X509_verify_cert_error_string(err) + ")";
    }
    if (torrent_name.empty()) return std::nullopt;
    const auto names = peer_names(cert.get());
    for (const auto& n : names)
        if (n == "*" || n == torrent_name) return std::nullopt;
    std::string listed;
    for (const auto& n : names)
        listed += (listed.empty() ? "" : ", ") + ("\"" + n + "\"");
    return "the certificate names " + (listed.empty() ? std::string("nothing") : listed) +
           ", not \"*\" or \"" + std::string(torrent_name) + "\" (the torrent's name)";
}

}  // namespace toast
