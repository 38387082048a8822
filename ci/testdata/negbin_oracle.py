# Independent oracle: exact negative-binomial quantiles with mpmath at 50 digits,
# P(Y > y) = P(Bin(y+s, p) <= s-1) summed term by term from the top.
import mpmath as mp
mp.mp.dps=50
def sf(y,s,p):
    n=y+s; q=1-p
    k=s-1
    t=mp.exp(mp.loggamma(n+1)-mp.loggamma(k+1)-mp.loggamma(n-k+1)+k*mp.log(p)+(n-k)*mp.log(q))
    tot=t; j=k
    while j>0:
        t*= j*q/((n-j+1)*p); tot+=t; j-=1
        if t<tot*mp.mpf(10)**-30: break
    return tot
def quant(prob,s,p):
    tail=1-mp.mpf(prob)
    q=1-p
    mean=s*q/p; sd=mp.sqrt(s*q)/p
    if sf(0,s,p)<=tail: return 0
    lo=max(mp.mpf(0),mp.floor(mean-8*sd)); hi=mp.ceil(mean+12*sd+50)
    lo=mp.mpf(-1) if sf(lo,s,p)<=tail else lo
    while hi-lo>1:
        mid=mp.floor((lo+hi)/2)
        if sf(mid,s,p)<=tail: hi=mid
        else: lo=mid
    return int(hi)
cases=[(3,"0.9"),(50,"0.99"),(1000,"0.999999"),(12,"0.3"),(1,"0.5"),(7,"0.999"),(20000,"0.5"),(30000,"0.00001"),(100000,"0.0009765625"),(100000,"0.00001"),(1000000,"0.00001"),(50000,"0.5"),(300000,"0.9")]
for s,p in cases:
    for prob in ["0.005","0.025","0.975","0.995"]:
        print("%d,%s,%s,%d"%(s, p, prob, quant(prob,s,mp.mpf(p))), flush=True)
