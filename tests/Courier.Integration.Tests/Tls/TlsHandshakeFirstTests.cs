using Courier.Integration.Tests.Infrastructure;
using NATS.Client.Core;

namespace Courier.Integration.Tests.Tls;

/// <summary>
/// <c>handshake_first</c>: the TLS handshake before INFO. Courier only: the option arrived in
/// nats-server 2.10, and the 2.9.10 reference refuses it as an unknown field of the tls block.
/// </summary>
public sealed class TlsHandshakeFirstTests : IClassFixture<CourierFixture>, IClassFixture<TlsCertificatesFixture>
{
    private readonly CourierFixture _server;
    private readonly TlsCertificatesFixture _tls;

    public TlsHandshakeFirstTests(CourierFixture server, TlsCertificatesFixture tls)
    {
        _server = server;
        _tls = tls;
    }

    [Fact]
    public async Task The_handshake_comes_first_and_info_is_the_first_encrypted_frame()
    {
        await using var server = await _server.StartServerAsync(_tls.TlsBlock("handshake_first: true"));
        await using var c = await WireClient.ConnectTlsFirstAsync(server, _tls.Certificates.CaFile);

        Assert.True(c.Info.GetProperty("tls_required").GetBoolean(), c.InfoLine);
        await c.HandshakeAsync();
        await c.SendAsync("SUB first 1\r\nPUB first 2\r\nhi\r\n");
        Assert.Equal("hi", (await c.ExpectMsgAsync()).PayloadText);
    }

    [Fact]
    public async Task NatsNet_in_implicit_tls_mode_connects_and_publishes()
    {
        await using var server = await _server.StartServerAsync(_tls.TlsBlock("handshake_first: true"));
        using var cts = new CancellationTokenSource(NatsNetClient.TestTimeout);
        await using var nats = new NatsConnection(new NatsOpts
        {
            Url = $"tls://127.0.0.1:{server.Port}",
            TlsOpts = new NatsTlsOpts { CaFile = _tls.Certificates.CaFile, Mode = TlsMode.Implicit },
            MaxReconnectRetry = 0,
        });
        await nats.ConnectAsync();
        var subject = Subjects.NewPrefix() + ".first";
        await using var sub = await nats.SubscribeCoreAsync<string>(subject, cancellationToken: cts.Token);
        await nats.PingAsync(cts.Token);

        await nats.PublishAsync(subject, "implicit", cancellationToken: cts.Token);

        Assert.Equal("implicit", (await sub.Msgs.ReadAsync(cts.Token)).Data);
    }

    [Fact]
    public async Task A_client_waiting_for_info_in_the_clear_gets_nothing_and_is_closed_after_the_timeout()
    {
        await using var server = await _server.StartServerAsync(_tls.TlsBlock("handshake_first: true\ntimeout: 0.5"));

        await Assert.ThrowsAnyAsync<Exception>(async () => await WireClient.ConnectAsync(server));
    }

    [Fact]
    public async Task The_reference_server_refuses_the_option_so_this_class_runs_on_courier_only()
    {
        var error = await Assert.ThrowsAsync<InvalidOperationException>(
            () => ServerProcess.StartAsync(ServerKind.NatsServer, _tls.TlsBlock("handshake_first: true")));

        Assert.Contains("handshake_first", error.Message, StringComparison.Ordinal);
    }
}
