"""A character-level GRU language model in the style of PyTorch's word language model example:
Embedding, a 2-layer GRU with batch_first, a Linear decoder, truncated backpropagation through
time with the hidden state carried (and detached) across chunks, Adam and gradient clipping.
Written for tensorlib's test suite; runs unchanged on PyTorch and on tensorlib.
"""
import torch
from torch import nn
from torch.nn import functional as F

text = (
    "a stitch in time saves nine; a rolling stone gathers no moss; all that glitters is not gold. "
    * 8
)
chars = sorted(set(text))
data = torch.tensor([chars.index(c) for c in text], dtype=torch.long)
batch_size, bptt = 4, 12
columns = len(data) // batch_size
data = data[:columns * batch_size].view(batch_size, columns)  # a row per stream, as batchify does


class RNNModel(nn.Module):
    def __init__(self, ntoken, ninp, nhid, nlayers):
        super().__init__()
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.GRU(ninp, nhid, nlayers, batch_first=True)
        self.decoder = nn.Linear(nhid, ntoken)
        self.nlayers, self.nhid = nlayers, nhid

    def forward(self, input, hidden):
        output, hidden = self.rnn(self.encoder(input), hidden)
        return self.decoder(output), hidden

    def init_hidden(self, bsz):
        return torch.zeros(self.nlayers, bsz, self.nhid)


model = RNNModel(len(chars), 16, 24, 2)
with torch.no_grad():  # the same weights in any library
    for i, p in enumerate(model.parameters()):
        p.copy_(
            torch.sin(torch.arange(p.numel(), dtype=torch.float32) * 0.77 + i).reshape(p.shape)
            * 0.3
        )
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
for epoch in range(2):
    hidden = model.init_hidden(batch_size)
    total, chunks = 0.0, 0
    for start in range(0, columns - 1 - bptt, bptt):
        x, y = data[:, start:start + bptt], data[:, start + 1:start + 1 + bptt]
        hidden = hidden.detach()  # truncated backpropagation through time
        output, hidden = model(x, hidden)
        loss = F.cross_entropy(output.reshape(-1, len(chars)), y.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        optimizer.step()
        total, chunks = total + loss.item(), chunks + 1
        if chunks % 5 == 0:
            print(f"epoch {epoch} chunk {chunks}: loss {loss.item():.6f}")
    print(f"epoch {epoch}: mean loss {total / chunks:.6f}")
