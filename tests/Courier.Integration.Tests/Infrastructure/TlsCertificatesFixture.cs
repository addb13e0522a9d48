using System.Net.Security;
using System.Security.Cryptography.X509Certificates;
using Courier.Testing;

namespace Courier.Integration.Tests.Infrastructure;

/// <summary>One throw-away PKI (CA, server and client certificates as PEM files) for a test class.</summary>
public sealed class TlsCertificatesFixture : IDisposable
{
    public TestCertificates Certificates { get; } = TestCertificates.Create();

    /// <summary>A <c>tls { }</c> block with the RSA server certificate and <paramref name="extra"/> lines.</summary>
    public string TlsBlock(string extra = "") => $$"""
        tls {
          cert_file: "{{Certificates.ServerCert}}"
          key_file: "{{Certificates.ServerKey}}"
          {{extra}}
        }
        """;

    /// <summary><see cref="TlsBlock"/> with client certificates required and checked against the test CA.</summary>
    public string VerifyBlock(string extra = "") => TlsBlock($$"""
        ca_file: "{{Certificates.CaFile}}"
        verify: true
        {{extra}}
        """);

    /// <summary>
    /// A client's check of the server certificate, for clients that take a callback (MQTTnet): it must
    /// name the host and chain to the test CA.
    /// </summary>
    public bool TrustsServer(X509Certificate? certificate, SslPolicyErrors errors)
    {
        if (certificate is null || errors.HasFlag(SslPolicyErrors.RemoteCertificateNameMismatch) || errors.HasFlag(SslPolicyErrors.RemoteCertificateNotAvailable))
        {
            return false;
        }

        var trust = new X509Certificate2Collection();
        trust.ImportFromPemFile(Certificates.CaFile);
        using var chain = new X509Chain();
        chain.ChainPolicy.TrustMode = X509ChainTrustMode.CustomRootTrust;
        chain.ChainPolicy.RevocationMode = X509RevocationMode.NoCheck;
        chain.ChainPolicy.CustomTrustStore.AddRange(trust);
        using var leaf = X509CertificateLoader.LoadCertificate(certificate.GetRawCertData());
        return chain.Build(leaf);
    }

    public void Dispose() => Certificates.Dispose();
}
