using System.Buffers;
using System.Net.Sockets;
using System.Text.Json;
using Courier.Protocols.Nats;

namespace Courier.Actors.Connections;

/// <summary>The start of a leaf link: INFO, CONNECT and, with TLS, the handshake between them (nats-server 2.9.10's order).</summary>
internal sealed partial class LeafConnection
{
    /// <summary>
    /// An accepted link sends INFO at once; a dialled one waits for the hub's INFO (nats-server's
    /// createLeafNode). With TLS (the hub's <c>leafnodes { tls { } }</c>, or the remote's block) the INFO
    /// still travels in the clear and the handshake follows it, before CONNECT.
    /// </summary>
    public override void Start()
    {
        if (!Link.Solicited)
        {
            if (_context.Authentication.NonceRequired)
            {
                Link.Nonce = Server.Authentication.Authenticator.NewNonce(); // operator mode: a leaf's JWT user signs it
            }

            var info = ProtocolWriter.Info(JsonSerializer.SerializeToUtf8Bytes(HubInfo(connectInfo: false), NatsJsonContext.Default.LeafInfo));
            if (_context.Tls is { } tls && Transport.Socket is not null)
            {
                _readPump = Task.Run(() => AcceptTlsAndRunAsync(info, tls));
                return;
            }

            Outbound.Write(info);
            Outbound.Signal();
            _writePump = Task.Run(RunWritePumpAsync);
            _readPump = Task.Run(RunReadPumpAsync);
            return;
        }

        _readPump = Task.Run(SolicitAndRunAsync);
    }

    /// <summary>
    /// The hub side with <c>leafnodes { tls { } }</c>, as nats-server 2.9.10's createLeafNode: INFO
    /// (<c>tls_required</c>) written in the clear, then the server handshake (a client certificate required
    /// with <c>verify</c>), then the pumps over the encrypted stream. A failed handshake is logged as
    /// nats-server logs it (<c>lid:N - TLS leafnode handshake error: ...</c>) and closes this link only.
    /// </summary>
    private async Task AcceptTlsAndRunAsync(byte[] info, TlsTransport tls)
    {
        try
        {
            await Transport.Stream.WriteAsync(info).ConfigureAwait(false);
        }
        catch (Exception e) when (Transport.IsHandshakeFailure(e))
        {
            RequestClose("Write Error");
            return;
        }

        if (!await TrySecureAsync(tls, "lid", "TLS leafnode handshake error").ConfigureAwait(false))
        {
            return;
        }

        Outbound.Signal();
        _writePump = Task.Run(RunWritePumpAsync);
        await RunReadPumpAsync().ConfigureAwait(false);
    }

    /// <summary>
    /// The leaf side, as nats-server 2.9.10's leafNodeResumeConnectProcess: the hub's first INFO is read in
    /// the clear (exactly its line, nothing past it); if the hub said <c>tls_required</c>, or the remote has
    /// TLS (a <c>tls { }</c> block or a <c>tls://</c> URL), the client handshake follows and CONNECT (queued
    /// by the INFO's processing) is the first encrypted frame; then the pumps.
    /// </summary>
    private async Task SolicitAndRunAsync()
    {
        var line = await ReadInfoLineAsync().ConfigureAwait(false);
        if (line is null)
        {
            RequestClose("Read Error");
            return;
        }

        var buffer = new ReadOnlySequence<byte>(line);
        if (Process(ref buffer) != ReadOutcome.Continue)
        {
            RequestClose(CloseRequest ?? "Protocol Error");
            return;
        }

        if (Link.Tls)
        {
            var remote = Link.Remote!;
            if (!await TrySecureAsync(_context.DialerFor(remote), Link.Url!.Host.Trim('[', ']'), "lid", "TLS leafnode handshake error").ConfigureAwait(false))
            {
                return;
            }
        }

        Outbound.Signal();
        _writePump = Task.Run(RunWritePumpAsync);
        await RunReadPumpAsync().ConfigureAwait(false);
    }

    /// <summary>
    /// Reads the hub's first line (its INFO) byte by byte, so nothing of what follows (a TLS handshake) is
    /// consumed; bounded in size and by nats-server's DEFAULT_LEAFNODE_INFO_WAIT. Null when the peer closed,
    /// said nothing in time, or sent no line.
    /// </summary>
    private async Task<byte[]?> ReadInfoLineAsync()
    {
        const int MaxInfoLine = 64 * 1024; // bytes: far above any hub's INFO (a few hundred bytes plus its URLs)
        using var wait = new CancellationTokenSource(InfoWait);
        var line = new ArrayBufferWriter<byte>(1024);
        var one = new byte[1];
        try
        {
            while (line.WrittenCount < MaxInfoLine)
            {
                if (await Transport.Stream.ReadAsync(one, wait.Token).ConfigureAwait(false) == 0)
                {
                    return null;
                }

                line.Write(one);
                if (one[0] == (byte)'\n')
                {
                    return line.WrittenSpan.ToArray();
                }
            }
        }
        catch (Exception e) when (e is IOException or SocketException or ObjectDisposedException or OperationCanceledException)
        {
            if (e is OperationCanceledException)
            {
                Log.InfoTimeout(_log, Id);
            }
        }

        return null;
    }

    /// <summary>How long a dialled link waits for the hub's INFO (nats-server's DEFAULT_LEAFNODE_INFO_WAIT is 1 s; the link's actor allows 2 s for INFO and CONNECT, so that bounds it first).</summary>
    private static readonly TimeSpan InfoWait = TimeSpan.FromSeconds(2);
}
