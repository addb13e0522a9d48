using System.Buffers;
using System.Text;
using Akka.Actor;
using Courier.Actors.Connections;
using Courier.Actors.Server;
using Courier.Testing;
using Xunit;

namespace Courier.Actors.Tests.Accounts;

/// <summary>The publish path keeps its no-allocation rule with accounts: in a named account and through a stream import.</summary>
public sealed class ImportPublishPathTests
{
    private const int Messages = 2_000; // per measured batch
    private const string Connect = "CONNECT {\"verbose\":false,\"pedantic\":false,\"headers\":true}\r\n";

    private static ServerOptions AccountsWithImport()
    {
        var options = new ServerOptions { Host = "127.0.0.1", MaxPending = 1L << 30 };
        var a = new AccountOptions("A");
        a.Exports.Add(new ExportOptions("feed.>", false, ServiceResponseType.Singleton, null));
        var b = new AccountOptions("B");
        b.Imports.Add(new ImportOptions(false, "A", "feed.>", null, "from_a"));
        options.Accounts.Add(a);
        options.Accounts.Add(b);
        return options;
    }

    private static async Task<ClientConnection> ConnectAsync(Broker broker, string account, List<Task> pumps)
    {
        var client = new ClientConnection(broker.NatsClients, new MemoryStream(), socket: null, broker.NextClientId(), ActorRefs.Nobody);
        await client.ProcessBatchAsync(new ReadOnlySequence<byte>(Encoding.ASCII.GetBytes(Connect)));
        client.BindAccount(broker.Accounts.Find(account)!);
        pumps.Add(client.Outbound.RunWritePumpAsync(Stream.Null));
        return client;
    }

    private static ReadOnlySequence<byte> Batch(string subject)
    {
        var text = new StringBuilder();
        for (var i = 0; i < Messages; i++)
        {
            text.Append("PUB ").Append(subject).Append(" 16\r\n0123456789abcdef\r\n");
        }

        return new ReadOnlySequence<byte>(Encoding.ASCII.GetBytes(text.ToString()));
    }

    [Fact]
    public async Task Publishing_to_a_subscriber_in_the_account_and_to_one_through_a_stream_import_allocates_nothing()
    {
        var broker = new Broker(AccountsWithImport());
        await broker.StartAsync();
        var pumps = new List<Task>();
        try
        {
            var publisher = await ConnectAsync(broker, "A", pumps);
            var local = await ConnectAsync(broker, "A", pumps);
            var importer = await ConnectAsync(broker, "B", pumps);
            await local.ProcessBatchAsync(new ReadOnlySequence<byte>("SUB feed.x 1\r\n"u8.ToArray()));
            await importer.ProcessBatchAsync(new ReadOnlySequence<byte>("SUB from_a.feed.x 7\r\n"u8.ToArray()));

            var batch = Batch("feed.x");
            for (var warm = 0; warm < 5; warm++)
            {
                Assert.True(publisher.ProcessBatchAsync(batch).IsCompletedSuccessfully);
            }

            var before = GC.GetAllocatedBytesForCurrentThread();
            Assert.True(publisher.ProcessBatchAsync(batch).IsCompletedSuccessfully);
            var allocated = GC.GetAllocatedBytesForCurrentThread() - before;

            Assert.Equal(0, allocated);
            Assert.True(SpinWait.SpinUntil(() => importer.Outbound.OutMsgs >= 6 * Messages && local.Outbound.OutMsgs >= 6 * Messages, TimeSpan.FromSeconds(20)));
        }
        finally
        {
            await broker.DisposeAsync();
        }
    }
}
