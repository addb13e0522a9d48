using System.Net.Security;
using System.Net.Sockets;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;
using Courier.Protocols.Nats;
using Microsoft.Extensions.Logging;

namespace Courier.Actors.Connections;

internal sealed partial class ClientConnection
{
    /// <summary>The certificate the client presented in the TLS handshake (verify, verify_and_map), if any.</summary>
    public X509Certificate2? ClientCertificate { get; private set; }

    /// <summary>The negotiated TLS version and cipher suite, for logs and monitoring; null on a plain connection.</summary>
    public (SslProtocols Protocol, TlsCipherSuite CipherSuite)? TlsState { get; private set; }

    /// <summary>The TLS version as nats-server's connz shows it (<c>1.2</c>, <c>1.3</c>); null on a plain connection.</summary>
    public string? TlsVersion => TlsState?.Protocol switch
    {
        null => null,
        SslProtocols.Tls13 => "1.3",
        SslProtocols.Tls12 => "1.2",
        var other => other.ToString(),
    };

    /// <summary>The cipher suite by Go's name (the IANA name, but ChaCha20 ECDHE suites without <c>_SHA256</c>).</summary>
    public string? TlsCipherSuiteName => TlsState?.CipherSuite.ToString() is { } name && name.StartsWith("TLS_ECDHE_", StringComparison.Ordinal) && name.EndsWith("_CHACHA20_POLY1305_SHA256", StringComparison.Ordinal)
        ? name[..^"_SHA256".Length]
        : TlsState?.CipherSuite.ToString();

    /// <summary>
    /// A TLS client connection, as nats-server's createClient: INFO in the clear (<c>tls_required</c>), then
    /// the client's ClientHello and the server handshake, then the pumps over the encrypted stream. With
    /// <c>handshake_first</c> the handshake comes first and INFO is the first encrypted frame.
    /// </summary>
    /// <remarks>
    /// Runs on the thread pool as the connection's read pump; the handshake's own timeout bounds it. A
    /// failed handshake closes this connection only, with nats-server's log line.
    /// </remarks>
    private async Task SecureAndRunAsync(TlsTransport tls)
    {
        SslStream secured;
        try
        {
            if (!tls.Options.HandshakeFirst)
            {
                await _stream.WriteAsync(FormatInfo()).ConfigureAwait(false);
            }

            secured = await tls.AuthenticateAsync(_stream).ConfigureAwait(false);
        }
        catch (Exception e) when (e is AuthenticationException or TimeoutException or IOException or SocketException or ObjectDisposedException or OperationCanceledException)
        {
            if (!IsClosed)
            {
                Log.TlsHandshakeError(_log, "cid", Id, RemoteIp, RemotePort, e is TimeoutException ? e.Message : $"TLS handshake error: {Reason(e)}");
            }

            RequestClose("TLS Handshake Error");
            return;
        }

        _stream = secured;
        AdoptTls(secured);

        if (tls.Options.HandshakeFirst)
        {
            Outbound.Write(FormatInfo());
        }

        Outbound.Signal();
        _writePump = Task.Run(RunWritePumpAsync);
        await RunReadPumpAsync().ConfigureAwait(false);
    }

    /// <summary>
    /// An MQTT client on a TLS MQTT listener, as nats-server's createMQTTClient: the server handshake
    /// first (MQTT sends nothing before CONNECT), then the MQTT pumps over the encrypted stream.
    /// </summary>
    /// <remarks>Runs on the thread pool as the read pump; the block's <c>timeout</c> bounds the handshake.</remarks>
    private async Task SecureMqttAndRunAsync(TlsTransport tls)
    {
        if (await TryHandshakeAsync(tls).ConfigureAwait(false))
        {
            _writePump = Task.Run(RunWritePumpAsync);
            await RunMqttReadPumpAsync().ConfigureAwait(false);
        }
    }

    /// <summary>
    /// A route with <c>cluster { tls { } }</c>, as nats-server's createRoute: the handshake before anything
    /// else, as the TLS client when this node dialled (the route URL's host names the peer) and as the
    /// server when it accepted, the peer's certificate verified both ways; then CONNECT/INFO and the
    /// pumps over the encrypted stream. Plain text on the route port fails here, logged as nats-server
    /// logs it (<c>rid:N - TLS route handshake error: ...</c>), and closes this link only.
    /// </summary>
    private async Task SecureRouteAndRunAsync(TlsTransport tls)
    {
        try
        {
            var secured = _route!.Solicited
                ? await tls.AuthenticateAsClientAsync(_stream, _route.Url!.Host.Trim('[', ']')).ConfigureAwait(false)
                : await tls.AuthenticateAsync(_stream).ConfigureAwait(false);
            _stream = secured;
            AdoptTls(secured);
        }
        catch (Exception e) when (e is AuthenticationException or TimeoutException or IOException or SocketException or ObjectDisposedException or OperationCanceledException)
        {
            if (!IsClosed)
            {
                Log.TlsHandshakeError(_log, "rid", Id, RemoteIp, RemotePort, e is TimeoutException ? e.Message : $"TLS route handshake error: {Reason(e)}");
            }

            RequestClose("TLS Handshake Error");
            return;
        }

        Outbound.Signal();
        _writePump = Task.Run(RunWritePumpAsync);
        await RunReadPumpAsync().ConfigureAwait(false);
    }

    /// <summary>The server handshake on this connection's stream; false (logged, close requested) when it failed.</summary>
    private async Task<bool> TryHandshakeAsync(TlsTransport tls)
    {
        try
        {
            var secured = await tls.AuthenticateAsync(_stream).ConfigureAwait(false);
            _stream = secured;
            AdoptTls(secured);
            return true;
        }
        catch (Exception e) when (e is AuthenticationException or TimeoutException or IOException or SocketException or ObjectDisposedException or OperationCanceledException)
        {
            if (!IsClosed)
            {
                Log.TlsHandshakeError(_log, "mid", Id, RemoteIp, RemotePort, e is TimeoutException ? e.Message : $"TLS handshake error: {Reason(e)}");
            }

            RequestClose("TLS Handshake Error");
            return false;
        }
    }

    /// <summary>Records what the handshake on <paramref name="secured"/> settled: the client certificate, version and suite.</summary>
    private void AdoptTls(SslStream secured)
    {
        ClientCertificate = secured.RemoteCertificate as X509Certificate2;
        TlsState = (secured.SslProtocol, secured.NegotiatedCipherSuite);
        if (_log.IsEnabled(LogLevel.Debug))
        {
            Log.TlsHandshakeComplete(_log, Id, secured.SslProtocol.ToString(), secured.NegotiatedCipherSuite.ToString());
        }
    }

    /// <summary>The INFO line for this client (once per connection: not on the data path).</summary>
    private byte[] FormatInfo()
    {
        Span<byte> info = stackalloc byte[2048]; // bytes: the INFO line is a few hundred
        var length = _broker.Info.Format(info, Id, RemoteIp, nonce: Nonce);
        return length > 0 ? info[..length].ToArray() : ProtocolWriter.Info(_broker.Info.Create(this));
    }

    // The innermost message says what went wrong (e.g. "client didn't provide a certificate").
    private static string Reason(Exception e)
    {
        while (e.InnerException is { } inner)
        {
            e = inner;
        }

        return e.Message;
    }

    private static partial class Log
    {
        // nats-server names a client by its type: cid (NATS), mid (MQTT).
        [LoggerMessage(Level = LogLevel.Error, Message = "{Ip}:{Port} - {Tag}:{Cid} - {Error}")]
        public static partial void TlsHandshakeError(ILogger logger, string tag, ulong cid, string ip, int port, string error);

        [LoggerMessage(Level = LogLevel.Debug, Message = "cid:{Cid} - TLS handshake complete: TLS version {Version}, cipher suite {CipherSuite}")]
        public static partial void TlsHandshakeComplete(ILogger logger, ulong cid, string version, string cipherSuite);
    }
}
