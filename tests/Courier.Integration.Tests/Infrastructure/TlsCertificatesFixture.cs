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

    public void Dispose() => Certificates.Dispose();
}
