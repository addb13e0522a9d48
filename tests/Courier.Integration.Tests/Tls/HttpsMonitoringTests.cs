using System.Net.Security;
using System.Security.Cryptography.X509Certificates;
using System.Text.Json;
using Courier.Integration.Tests.Infrastructure;

namespace Courier.Integration.Tests.Tls;

/// <summary><c>https_port</c>: monitoring served over TLS with the <c>tls { }</c> block's certificate.</summary>
public abstract class HttpsMonitoringTests<TServer> : IClassFixture<TServer>
    where TServer : ServerFixture
{
    private readonly TServer _server;
    private readonly TlsCertificatesFixture _tls;

    protected HttpsMonitoringTests(TServer server, TlsCertificatesFixture tls)
    {
        _server = server;
        _tls = tls;
    }

    [Fact]
    public async Task Varz_is_served_over_https_with_the_tls_certificate_and_says_so()
    {
        // -m 0 after the harness's -m -1: only the HTTPS port is on (both at once is a configuration error).
        await using var server = await _server.StartServerAsync(_tls.TlsBlock() + "\nhttps_port: -1\n", "-m", "0");
        using var http = TrustingTestCa();

        using var response = await http.GetAsync(new Uri($"https://127.0.0.1:{server.MonitorPort}/varz"));
        var body = await response.Content.ReadAsStringAsync();

        Assert.True(response.IsSuccessStatusCode, body);
        using var varz = JsonDocument.Parse(body);
        Assert.Equal(-1, varz.RootElement.GetProperty("https_port").GetInt32()); // as configured, as nats-server reports it
        Assert.Equal(0, varz.RootElement.GetProperty("http_port").GetInt32());
        Assert.True(varz.RootElement.GetProperty("tls_required").GetBoolean());
        Assert.Equal(2.0, varz.RootElement.GetProperty("tls_timeout").GetDouble());
    }

    [Fact]
    public async Task Plain_http_on_the_https_port_gets_no_monitoring_page()
    {
        await using var server = await _server.StartServerAsync(_tls.TlsBlock() + "\nhttps_port: -1\n", "-m", "0");
        using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(10) };

        HttpResponseMessage? response = null;
        try
        {
            response = await http.GetAsync(new Uri($"http://127.0.0.1:{server.MonitorPort}/varz"));
        }
        catch (HttpRequestException)
        {
            // Closed without an HTTP answer: fine.
        }

        using (response)
        {
            Assert.False(response?.IsSuccessStatusCode ?? false, "plain HTTP must not be served on the HTTPS port");
        }
    }

    private HttpClient TrustingTestCa()
    {
        var ca = X509CertificateLoader.LoadCertificateFromFile(_tls.Certificates.CaFile);
        var handler = new SocketsHttpHandler
        {
            SslOptions = new SslClientAuthenticationOptions
            {
                CertificateRevocationCheckMode = X509RevocationMode.NoCheck,
                CertificateChainPolicy = new X509ChainPolicy
                {
                    TrustMode = X509ChainTrustMode.CustomRootTrust,
                    RevocationMode = X509RevocationMode.NoCheck,
                    CustomTrustStore = { ca },
                },
            },
        };
        return new HttpClient(handler) { Timeout = TimeSpan.FromSeconds(10) };
    }
}

public sealed class HttpsMonitoringTests_NatsServer(NatsServerFixture server, TlsCertificatesFixture tls)
    : HttpsMonitoringTests<NatsServerFixture>(server, tls), IClassFixture<TlsCertificatesFixture>;

public sealed class HttpsMonitoringTests_Courier(CourierFixture server, TlsCertificatesFixture tls)
    : HttpsMonitoringTests<CourierFixture>(server, tls), IClassFixture<TlsCertificatesFixture>;
