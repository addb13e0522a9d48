using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;
using Courier.Protocols.WebSocket;

namespace Courier.Actors.Connections;

/// <summary>
/// The byte stream a connection's protocol runs over: a socket's stream, the same after a TLS
/// handshake, or WebSocket frames (the listener made those, over plain TCP or TLS). A TLS handshake
/// replaces the stream here, below the protocol, as Kestrel's connection middleware replaces the
/// transport and calls the next layer: the protocol classes read and write <see cref="Stream"/> and
/// never see which it is.
/// </summary>
internal sealed class Transport
{
    private Stream _stream;

    public Transport(Stream stream, Socket? socket)
    {
        _stream = stream;
        Socket = socket;
        if (socket?.RemoteEndPoint is IPEndPoint remote)
        {
            RemoteIp = remote.Address.IsIPv4MappedToIPv6 ? remote.Address.MapToIPv4().ToString() : remote.Address.ToString();
            RemotePort = remote.Port;
        }

        if (stream is WebSocketStream { Tls: { } wss })
        {
            // wss: the listener ran the handshake before the upgrade; its certificate may name the
            // user (verify_and_map). Like nats-server 2.9, connz shows no TLS version for these clients.
            PeerCertificate = wss.RemoteCertificate as X509Certificate2;
        }
    }

    /// <summary>What the protocol reads and writes: replaced once by the TLS stream after a handshake, before the pumps start.</summary>
    public Stream Stream => _stream;

    /// <summary>The socket under the stream; null for a connection without one (tests, benchmarks).</summary>
    public Socket? Socket { get; }

    public string RemoteIp { get; } = "";

    public int RemotePort { get; }

    /// <summary>WebSocket frames (the stream unframes reads and frames write batches).</summary>
    public bool IsWebSocket => _stream is WebSocketStream;

    /// <summary>The WebSocket upgrade's result (its cookie JWT), null on a plain or TLS stream.</summary>
    public WebSocketUpgradeResult? WebSocketUpgrade => (_stream as WebSocketStream)?.Upgrade;

    /// <summary>The certificate the peer presented in the TLS handshake (verify, verify_and_map), if any.</summary>
    public X509Certificate2? PeerCertificate { get; private set; }

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
    /// Runs the TLS handshake on the stream and replaces it with the encrypted one: as the server, or as
    /// the client of <paramref name="clientOf"/> (a route this node dialled). Throws what the handshake
    /// threw (see <see cref="IsHandshakeFailure"/>); the stream is then disposed.
    /// </summary>
    public async Task SecureAsync(TlsTransport tls, string? clientOf = null)
    {
        var secured = clientOf is null
            ? await tls.AuthenticateAsync(_stream).ConfigureAwait(false)
            : await tls.AuthenticateAsClientAsync(_stream, clientOf).ConfigureAwait(false);
        _stream = secured;
        PeerCertificate = secured.RemoteCertificate as X509Certificate2;
        TlsState = (secured.SslProtocol, secured.NegotiatedCipherSuite);
    }

    /// <summary>
    /// Runs the client handshake of a dialled link with a remote's TLS settings (<paramref name="host"/>:
    /// the URL's host) and replaces the stream with the encrypted one; throws as <see cref="SecureAsync(TlsTransport, string?)"/>.
    /// </summary>
    public async Task SecureAsync(TlsDialer dialer, string host)
    {
        var secured = await dialer.AuthenticateAsClientAsync(_stream, host).ConfigureAwait(false);
        _stream = secured;
        PeerCertificate = secured.RemoteCertificate as X509Certificate2;
        TlsState = (secured.SslProtocol, secured.NegotiatedCipherSuite);
    }

    /// <summary>Whether <paramref name="e"/> is how a handshake fails (this connection only).</summary>
    public static bool IsHandshakeFailure(Exception e) =>
        e is AuthenticationException or TimeoutException or IOException or SocketException or ObjectDisposedException or OperationCanceledException;

    /// <summary>Why a handshake failed: the innermost message (e.g. "client didn't provide a certificate").</summary>
    public static string Reason(Exception e)
    {
        while (e.InnerException is { } inner)
        {
            e = inner;
        }

        return e.Message;
    }

    /// <summary>
    /// Closes the transport after the write pump ended (<paramref name="flushed"/>) or gave up: a
    /// WebSocket close frame saying why first (bounded: a peer that reads nothing cannot hold it), then
    /// the socket.
    /// </summary>
    public async Task CloseAsync(string reason, bool flushed)
    {
        if (_stream is WebSocketStream webSocket && flushed)
        {
            // nats-server ends a WebSocket client with a close frame whose status says why.
            try
            {
                await webSocket.CloseAsync(reason).AsTask().WaitAsync(TimeSpan.FromSeconds(1)).ConfigureAwait(false);
            }
            catch (TimeoutException)
            {
            }
        }

        try
        {
            Socket?.Shutdown(SocketShutdown.Both);
        }
        catch (SocketException)
        {
        }
        catch (ObjectDisposedException)
        {
        }

        await _stream.DisposeAsync().ConfigureAwait(false);
        Socket?.Dispose();
    }
}
